package interop.bookkeeper;

import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON writer: objects and arrays are built by appending to a
 * StringBuilder, so that the output's key order is the order of the code
 * (the descriptions and traces are compared and committed as text).
 */
final class Json {
    private final StringBuilder sb = new StringBuilder();
    private boolean first = true;

    static String hex(byte[] b) {
        return b == null ? null : HexFormat.of().formatHex(b);
    }

    Json open(char c) {
        sep();
        sb.append(c);
        first = true;
        return this;
    }

    Json close(char c) {
        sb.append(c);
        first = false;
        return this;
    }

    Json obj() {
        return open('{');
    }

    Json end() {
        return close('}');
    }

    Json arr() {
        return open('[');
    }

    Json endArr() {
        return close(']');
    }

    /** Starts a member: "name": (the value follows). */
    Json key(String name) {
        sep();
        str(sb, name);
        sb.append(':');
        first = true; // the value needs no separator
        return this;
    }

    Json str(String v) {
        sep();
        if (v == null) {
            sb.append("null");
        } else {
            str(sb, v);
        }
        first = false;
        return this;
    }

    Json num(long v) {
        sep();
        sb.append(v);
        first = false;
        return this;
    }

    /** A finite double as a JSON number (NaN and infinities as 0). */
    Json num(double v) {
        sep();
        sb.append(Double.isFinite(v) ? Double.toString(v) : "0");
        first = false;
        return this;
    }

    Json bool(boolean v) {
        sep();
        sb.append(v);
        first = false;
        return this;
    }

    /** Appends a line break (whitespace: the value is unchanged). */
    Json nl() {
        sb.append('\n');
        return this;
    }

    /** Appends an already encoded JSON value. */
    Json raw(String encoded) {
        sep();
        sb.append(encoded);
        first = false;
        return this;
    }

    Json nul() {
        sep();
        sb.append("null");
        first = false;
        return this;
    }

    Json put(String name, String v) {
        return key(name).str(v);
    }

    Json put(String name, long v) {
        return key(name).num(v);
    }

    Json put(String name, double v) {
        return key(name).num(v);
    }

    Json put(String name, boolean v) {
        return key(name).bool(v);
    }

    Json putHex(String name, byte[] v) {
        return v == null ? key(name).nul() : key(name).str(hex(v));
    }

    /** An array of strings under name. */
    Json putStrings(String name, List<String> v) {
        key(name).arr();
        for (String s : v) {
            str(s);
        }
        return endArr();
    }

    /** An object of string values under name, left out when m is empty. */
    Json putStringMap(String name, Map<String, String> m) {
        if (m.isEmpty()) {
            return this;
        }
        key(name).obj();
        for (Map.Entry<String, String> e : m.entrySet()) {
            put(e.getKey(), e.getValue());
        }
        return end();
    }

    private void sep() {
        if (!first) {
            sb.append(',');
        }
        first = false;
    }

    private static void str(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
