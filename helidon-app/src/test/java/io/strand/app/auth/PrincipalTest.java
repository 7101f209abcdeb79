package io.strand.app.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import org.junit.jupiter.api.Test;

class PrincipalTest {
    @Test
    void requireDocsShouldRefuseTheSystemWorkspacesDocsEvenToRoot() {
        StrandException e = assertThrows(StrandException.class, () -> Principal.ROOT.requireDocs("_system", Scope.READ));
        assertEquals(ErrorCode.FORBIDDEN, e.code());
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(StrandException.class, () -> Principal.ROOT.requireDocs("_system", Scope.RW)).code());
        Principal.ROOT.require("_system", Scope.READ); // its logs stay readable by root
        Principal.ROOT.requireDocs("acme", Scope.RW);
    }
}
