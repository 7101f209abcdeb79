/**
 * Docs: small JSON objects with single-writer, atomic updates ({@code get}, {@code put}, {@code cas},
 * {@code incr}, {@code apply}, {@code delete}, {@code list}), entry point {@link io.strand.docstore.DocStore}.
 *
 * <p>A doc incr, by role: {@code DocStore.incr} (facade) → {@link io.strand.docstore.TurnSubmitter} (names into a
 * {@link io.strand.docstore.DocId}, turn to the workspace's writer thread) → {@link io.strand.docstore.DocWriter}
 * (read through the {@link io.strand.docstore.DocOverlay}, apply the {@link io.strand.docstore.Op}, check
 * {@link io.strand.docstore.DocCapacity}) → {@link io.strand.docstore.JournalLanes} (append to the journal) → the
 * group's write-ahead records are durable → {@link io.strand.docstore.DocPublisher} (map view and name index) →
 * the future completes. {@link io.strand.docstore.DocCheckpointer} bounds replay and journal size in the
 * background; {@link io.strand.docstore.DocRecovery} opens the store.
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
