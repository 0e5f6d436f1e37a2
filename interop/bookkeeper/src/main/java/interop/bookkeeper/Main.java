package interop.bookkeeper;

/**
 * Runs a program's body and ends the JVM with its outcome: BookKeeper's
 * threads (journal, sync, cleanup executors) are not daemons, so a failure
 * must not leave the process running.
 */
final class Main {
    interface Body {
        void run() throws Exception;
    }

    private Main() {}

    static void run(Body body) {
        int code = 0;
        try {
            body.run();
        } catch (Throwable t) {
            t.printStackTrace();
            code = 1;
        }
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(code);
    }
}
