package io.strand.app.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SubscriptionCreditTest {
    @Test
    void creditAddsUpAndSaturatesInsteadOfWrapping() {
        assertEquals(3, Subscription.addCredit(1, 2));
        assertEquals(Long.MAX_VALUE - 1, Subscription.addCredit(Long.MAX_VALUE - 2, 1));
        assertEquals(Long.MAX_VALUE - 1, Subscription.addCredit(Long.MAX_VALUE - 1, 2));
        assertEquals(Long.MAX_VALUE - 1, Subscription.addCredit(0, Long.MAX_VALUE));
        assertEquals(Long.MAX_VALUE - 1, Subscription.addCredit(Long.MAX_VALUE - 1, Long.MAX_VALUE));
        assertEquals(Long.MAX_VALUE, Subscription.addCredit(Long.MAX_VALUE, 5), "unlimited stays unlimited");
    }
}
