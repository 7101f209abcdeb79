package io.strand.docstore;

import java.util.List;

/**
 * One page of doc names in ascending order; {@code next} is the {@code after} cursor of the following
 * page, or null when this page reaches the end.
 */
public record DocPage(List<String> docs, String next) {
}
