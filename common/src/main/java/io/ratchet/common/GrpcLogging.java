package io.ratchet.common;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * gRPC (the copy inside Ratis) logs through java.util.logging, and prints an INFO line about the
 * transport when a process first connects or serves. Quieted to warnings unless the application set a
 * level for that logger itself.
 */
public final class GrpcLogging {
    /** Held: java.util.logging keeps loggers weakly, and a collected logger forgets its level. */
    private static final Logger GRPC = Logger.getLogger("org.apache.ratis.thirdparty.io.grpc");

    private GrpcLogging() {
    }

    public static void quiet() {
        synchronized (GRPC) {
            if (GRPC.getLevel() == null) {
                GRPC.setLevel(Level.WARNING);
            }
        }
    }
}
