package io.strand.app.auth;

import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;

/** Who a request acts as: a workspace (or {@code *} for root), a scope, and the token's id and expiry. */
public record Principal(String ws, Scope scope, String jti, long expEpochSeconds) {
    public static final Principal ROOT = new Principal("*", Scope.ADMIN, "root", Long.MAX_VALUE);

    public boolean isRoot() {
        return "*".equals(ws) && scope == Scope.ADMIN;
    }

    /**
     * 403 unless this principal may act on {@code workspace} with {@code needed}. The reserved
     * {@code _system} workspace (the audit log) is readable by root only and written by the server
     * alone, never through the API.
     */
    public void require(String workspace, Scope needed) {
        if (Names.SYSTEM_WORKSPACE.equals(workspace)) {
            if (!isRoot()) {
                throw new StrandException(ErrorCode.FORBIDDEN, "only the root token may read workspace '" + workspace + "'");
            }
            if (needed != Scope.READ) {
                throw new StrandException(ErrorCode.FORBIDDEN, "workspace '" + workspace + "' is written by the server only");
            }
            return;
        }
        if (!"*".equals(ws) && !ws.equals(workspace)) {
            throw new StrandException(ErrorCode.FORBIDDEN, "this token is for workspace '" + ws + "', not '" + workspace + "'");
        }
        if (!scope.includes(needed)) {
            throw new StrandException(ErrorCode.FORBIDDEN, "this needs scope '" + needed.wire() + "'; the token has '" + scope.wire() + "'");
        }
    }

    /**
     * As {@link #require}, for the docs of {@code workspace}: those of {@code _system} are the
     * server's own (in a cluster, the signing key), so nobody reads them through the API, root
     * included; root still reads the {@code _system} logs.
     */
    public void requireDocs(String workspace, Scope needed) {
        if (Names.SYSTEM_WORKSPACE.equals(workspace) && needed == Scope.READ) {
            throw new StrandException(ErrorCode.FORBIDDEN, "the docs of workspace '" + workspace + "' are the server's own");
        }
        require(workspace, needed);
    }
}
