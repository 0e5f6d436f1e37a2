package interop.bookkeeper;

import java.util.HashMap;
import java.util.Map;

/** The programs' flags: --name value pairs. */
final class Args {
    private final Map<String, String> values = new HashMap<>();

    Args(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("usage: --name value ...; got " + a);
            }
            values.put(a.substring(2), args[++i]);
        }
    }

    String get(String name) {
        String v = values.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }

    String get(String name, String def) {
        return values.getOrDefault(name, def);
    }

    long getLong(String name, long def) {
        String v = values.get(name);
        return v == null ? def : Long.parseLong(v);
    }
}
