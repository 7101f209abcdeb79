package io.strand.app.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.app.auth.AuthFiles;
import io.strand.app.stores.Placement;
import io.strand.core.ErrorCode;
import io.strand.core.Json;
import io.strand.core.Names;
import io.strand.core.StrandException;
import io.strand.docstore.DocId;
import io.strand.docstore.DocValue;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.function.LongSupplier;

/**
 * The cluster's token-signing secret (SPEC §13), kept as the doc {@code auth} of the reserved
 * workspace {@code _system}, so the Raft group of that workspace's shard replicates it like any
 * doc. Every node that finds no such doc proposes one with {@code expectVersion 0} (create only),
 * carrying a fresh random key; the group applies the first proposal and refuses the others with
 * {@code version_conflict}, so exactly one key wins and every node then reads that one. The doc is
 * never changed afterwards: the API cannot write {@code _system}, nor read its docs
 * ({@link io.strand.app.auth.Principal#requireDocs}).
 *
 * <p>Doc value (JSON):
 * <pre>
 * | field       | type   | meaning                                                  |
 * |-------------|--------|----------------------------------------------------------|
 * | {@code alg}       | string | {@code "HS256"}                                          |
 * | {@code secret}    | string | the 32-byte key, base64url without padding (43 chars)    |
 * | {@code createdAt} | number | epoch seconds when the proposing node made the key       |
 * </pre>
 * Commit point: the Raft commit of the {@code put} (a majority of the shard's replicas hold it in
 * their fsynced logs). A node that crashes before it learns the outcome proposes again at its next
 * start and reads whichever key won. Stateless.
 */
final class SharedSecret {
    static final String DOC = "auth";
    private static final DocId ID = DocId.of(Names.SYSTEM_WORKSPACE, DOC);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final System.Logger LOG = System.getLogger("strand.auth");

    /** The key and when it was made (the cluster's root token is issued at that time). */
    record Key(byte[] secret, long createdAt) {
    }

    private SharedSecret() {
    }

    /**
     * The cluster's key: from this node's replica when it holds the doc already (it never changes, so
     * a local copy is current), else after proposing one and waiting for the shard to answer. Empty
     * while the shard has no quorum (the caller tries again later).
     */
    static Optional<Key> load(Placement placement, LongSupplier nowSeconds) {
        Optional<Key> local = readLocal(placement);
        return local.isPresent() ? local : propose(placement, nowSeconds.getAsLong());
    }

    /**
     * Proposes a fresh key made at {@code nowSeconds} (create only), then reads whichever key won
     * after a read barrier. Empty while the shard has no quorum: a proposal that timed out may still
     * be committed later, and then it is the key every node reads.
     */
    static Optional<Key> propose(Placement placement, long nowSeconds) {
        try {
            placement.writes().doc("put", ID, proposal(nowSeconds)).join();
            LOG.log(System.Logger.Level.INFO, "auth: this node created the cluster's signing key");
        } catch (CompletionException | StrandException e) {
            StrandException cause = unwrap(e);
            if (cause.code() == ErrorCode.UNAVAILABLE || cause.code() == ErrorCode.OUTCOME_UNKNOWN) {
                LOG.log(System.Logger.Level.INFO, "auth: waiting for a quorum of the _system shard to load the signing key: "
                        + cause.getMessage());
                return Optional.empty();
            }
            if (cause.code() != ErrorCode.VERSION_CONFLICT) {
                throw cause;
            }
            // another node's key won: read it below
        }
        placement.awaitCaughtUp(Names.SYSTEM_WORKSPACE);
        return readLocal(placement);
    }

    /** The {@code put} body proposing a fresh key made at {@code nowSeconds}. */
    static ObjectNode proposal(long nowSeconds) {
        byte[] key = new byte[AuthFiles.SECRET_BYTES];
        RANDOM.nextBytes(key);
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.putObject("value").put("alg", "HS256")
                .put("secret", Base64.getUrlEncoder().withoutPadding().encodeToString(key))
                .put("createdAt", nowSeconds);
        body.put("expectVersion", 0);
        return body;
    }

    /** The key this node's replica holds, if it holds one yet. */
    static Optional<Key> readLocal(Placement placement) {
        return placement.local(Names.SYSTEM_WORKSPACE).docs().get(ID).map(SharedSecret::parse);
    }

    /** The key a stored doc holds; a doc that does not hold one is corruption, never replaced. */
    static Key parse(DocValue doc) {
        JsonNode v = doc.value();
        try {
            byte[] secret = Base64.getUrlDecoder().decode(v.path("secret").asText(""));
            if (!"HS256".equals(v.path("alg").asText()) || secret.length != AuthFiles.SECRET_BYTES
                    || !v.path("createdAt").canConvertToLong() || v.path("createdAt").asLong() <= 0) {
                throw new IllegalArgumentException("wrong fields");
            }
            return new Key(secret, v.path("createdAt").asLong());
        } catch (IllegalArgumentException e) {
            throw new StrandException(ErrorCode.CORRUPT, "the cluster's signing key (doc " + ID + ", version "
                    + doc.version() + ") is damaged: " + e.getMessage());
        }
    }

    private static StrandException unwrap(RuntimeException e) {
        Throwable t = e;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t instanceof StrandException s ? s : new StrandException(ErrorCode.INTERNAL, String.valueOf(t));
    }
}
