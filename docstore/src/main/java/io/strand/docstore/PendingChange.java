package io.strand.docstore;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Owned by the writer thread that committed it: a change appended to the journal, waiting for its group's
 * write-ahead records to be durable before {@link DocPublisher} shows it to readers. {@code state} null = the doc
 * was deleted. A class, not a record: the overlay removes it by identity once published.
 */
final class PendingChange {
    final DocId id;
    final StoredDoc state;
    /** {@code state}'s value as the turn built it; never changed, so the next turn copies it instead of parsing. */
    final ObjectNode tree;
    /** Where the lane appended it; set once, on the writer thread, before it is pending. */
    long journalIndex;

    PendingChange(DocId id, StoredDoc state, ObjectNode tree) {
        this.id = id;
        this.state = state;
        this.tree = tree;
    }
}
