package io.strand.coldtier;

/**
 * The term under which this process writes a log's manifest: the fence of SPEC §13 ("each manifest
 * commit is fenced by the leader's term"). Implementations are thread-safe (they read the Raft
 * server's state, or return a constant).
 *
 * <ul>
 *   <li>{@code 0} ({@link #NONE}): one writer per store (a single node, an offline tool); commits are
 *       not fenced and keep whatever term the manifest holds.
 *   <li>{@code ≥ 1}: a cluster replica leading its shard in that Raft term. A commit stamps the term
 *       into the manifest and is refused when the stored manifest already carries a higher one, so
 *       once a newer leader has committed, a deposed leader's commit fails and never overwrites.
 *   <li>{@code < 0}: this process may not write the cold tier now (a follower, a replica that just
 *       stepped down); every manifest commit and every upload or delete before one is refused.
 * </ul>
 *
 * {@link ColdLog} reads the term once per commit attempt and once before each upload or delete, so
 * a step-down between the steps of a roll stops it before the manifest.
 */
@FunctionalInterface
public interface WriterTerm {
    /** The only writer of its store: no fence. */
    WriterTerm NONE = () -> 0;

    /** The current term as above: {@code 0} unfenced, {@code ≥ 1} fenced, {@code < 0} may not write. */
    long current();
}
