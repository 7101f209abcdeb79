package io.strand.logtier;

/** The ack of an append (SPEC §5): seqs assigned, server ts, the durability mode that applied, and whether it was a retry. */
public record AppendResult(long firstSeq, long lastSeq, long ts, String durable, boolean duplicate) {
}
