/**
 * Docs: small JSON objects with single-writer, atomic updates ({@code get}, {@code put}, {@code cas},
 * {@code incr}, {@code apply}, {@code delete}, {@code list}), entry point {@link io.strand.docstore.DocStore}.
 *
 * <p>Files under the configured data dir, by role:
 * <ul>
 *   <li>{@code journal/} — {@link io.strand.docstore.DocJournal}: Chronicle Queue of whole new doc values and
 *       tombstones, each record also in the write-ahead log before any ack. The source of truth.</li>
 *   <li>{@code docs.cm3} — {@link io.strand.docstore.DocView}: Chronicle Map of the current durable docs,
 *       served to readers. A view: rebuilt or recovered + replayed whenever it cannot be trusted.</li>
 *   <li>{@code docs.snapshot} — {@link io.strand.docstore.DocSnapshot}: every doc as of a journal index, so
 *       older journal cycles can be deleted.</li>
 *   <li>{@code docs.checkpoint} — {@link io.strand.docstore.DocCheckpoint}: clean-shutdown marker and the
 *       journal index up to which the fsynced map is complete.</li>
 *   <li>{@code docstore.lock} — held while a process has the store open.</li>
 * </ul>
 */
package io.strand.docstore;
