package io.ratchet.statemachine;

/** Big-endian numbers in byte arrays. */
final class ByteArrays {
    private ByteArrays() {
    }

    static void putLong(byte[] b, int at, long v) {
        for (int i = 7; i >= 0; i--) {
            b[at + i] = (byte) v;
            v >>>= 8;
        }
    }

    static byte[] longBytes(long v) {
        byte[] b = new byte[Long.BYTES];
        putLong(b, 0, v);
        return b;
    }

    static void putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    static byte[] intBytes(int v) {
        byte[] b = new byte[Integer.BYTES];
        putInt(b, 0, v);
        return b;
    }

    static int getInt(byte[] b, int at) {
        return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
    }

    static long getLong(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[at + i] & 0xff);
        }
        return v;
    }
}
