package io.strand.app.ds;

/** Subscription patterns: {@code *} is one path segment, {@code **} zero or more, anything else literal. Stateless. */
final class DsGlob {
    private DsGlob() {
    }

    static boolean matches(String pattern, String path) {
        return match(split(pattern), 0, split(path), 0);
    }

    private static String[] split(String p) {
        String t = DsSubscription.trimSlashes(p);
        return t.isEmpty() ? new String[0] : t.split("/+");
    }

    private static boolean match(String[] pattern, int pi, String[] path, int si) {
        while (pi < pattern.length && si < path.length) {
            String seg = pattern[pi];
            if (seg.equals("**")) {
                for (int i = si; i <= path.length; i++) {
                    if (match(pattern, pi + 1, path, i)) {
                        return true;
                    }
                }
                return false;
            }
            if (!seg.equals("*") && !seg.replaceAll("%2[Aa]", "*").equals(path[si])) {
                return false;
            }
            pi++;
            si++;
        }
        while (pi < pattern.length && pattern[pi].equals("**")) {
            pi++;
        }
        return pi == pattern.length && si == path.length;
    }
}
