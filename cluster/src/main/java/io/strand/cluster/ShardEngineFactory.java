package io.strand.cluster;

import java.io.IOException;
import java.nio.file.Path;

/** Opens shard engines for the replicas this node holds. Called on the shard's apply thread. */
public interface ShardEngineFactory {
    /** Opens the engine over {@code liveDir} (already filled from a snapshot, or empty for a new shard). */
    ShardEngine open(int shard, Path liveDir) throws IOException;

    /** The engine of this shard was replaced (snapshot installed): holders of the old one (subscriptions) must let go. */
    default void replaced(int shard, ShardEngine old, ShardEngine now) {
    }
}
