package io.strand.docstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import org.junit.jupiter.api.Test;

/** A doc id is validated once, workspace first, and keys the doc as {@code ws/doc}. */
class DocIdTest {

    @Test
    void ofShouldKeyTheDocUnderItsWorkspaceWhenBothNamesAreValid() {
        DocId id = DocId.of("w-1", "a.b_c");
        assertEquals("w-1", id.ws());
        assertEquals("a.b_c", id.doc());
        assertEquals("w-1/a.b_c", id.key());
        assertEquals(id, DocId.fromKey("w-1/a.b_c"));
    }

    @Test
    void ofShouldRefuseTheWorkspaceFirstWhenBothNamesAreInvalid() {
        StrandException e = assertThrows(StrandException.class, () -> DocId.of("W/..", "../x"));
        assertEquals(ErrorCode.INVALID_NAME, e.code());
        assertTrue(e.getMessage().startsWith("invalid workspace name"), e.getMessage());
    }

    @Test
    void ofShouldRefuseADocNameThatCouldLeaveItsWorkspace() {
        for (String doc : new String[] {"../x", "a/b", "..", "", ".hidden"}) {
            StrandException e = assertThrows(StrandException.class, () -> DocId.of("w", doc), doc);
            assertEquals(ErrorCode.INVALID_NAME, e.code());
            assertTrue(e.getMessage().startsWith("invalid doc name"), e.getMessage());
        }
    }
}
