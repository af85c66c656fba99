package io.ratchet.common.tls;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A value read from files and read again once they change, so a renewed certificate takes effect without a
 * restart. Whether they changed is looked at on use, at most once a period: a handshake costs a clock read,
 * not a file system call. A read that fails (a file half written, a key that is not the new certificate's
 * yet) keeps the value in use, says so once, and is tried again at the next look.
 */
final class Reloading<T> {
    private static final Logger LOG = LoggerFactory.getLogger(Reloading.class);

    /** Reads the value from the files. */
    @FunctionalInterface
    interface Reader<T> {
        T read() throws IOException, GeneralSecurityException;
    }

    private final String what;
    private final List<Path> files;
    private final long periodNanos;
    private final Reader<T> reader;
    private volatile T value;
    /** The value the last renewal replaced: a reader may have picked something from it just before. */
    private volatile T previous;
    private volatile long nextLook;
    /** What the files were when {@link #value} was read, and when a read last failed; under this object's lock. */
    private List<Object> read;
    private List<Object> failed;

    /**
     * Reads the value now.
     *
     * @throws IOException              when a file cannot be read
     * @throws GeneralSecurityException when what it holds is not usable (the message names the file)
     */
    Reloading(String what, List<Path> files, Duration period, Reader<T> reader) throws IOException, GeneralSecurityException {
        this.what = what;
        this.files = List.copyOf(files);
        this.periodNanos = period.toNanos();
        this.reader = reader;
        this.read = stamps();
        this.value = reader.read();
        this.nextLook = System.nanoTime() + periodNanos;
    }

    T get() {
        if (System.nanoTime() - nextLook >= 0) {
            look();
        }
        return value;
    }

    /** The value before the last renewal; null before the first. */
    T previous() {
        return previous;
    }

    private synchronized void look() {
        long now = System.nanoTime();
        if (now - nextLook < 0) {
            return;
        }
        nextLook = now + periodNanos;
        List<Object> stamps;
        try {
            stamps = stamps();
        } catch (IOException e) {
            failed(List.of(e.toString()), e);
            return;
        }
        if (stamps.equals(read)) {
            return;
        }
        try {
            T fresh = reader.read();
            previous = value;
            value = fresh;
            read = stamps;
            failed = null;
            LOG.info("read the renewed {} from {}", what, files);
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            failed(stamps, e);
        }
    }

    private void failed(List<Object> stamps, Exception e) {
        if (!stamps.equals(failed)) {
            failed = stamps;
            LOG.warn("the {} in {} changed but cannot be read ({}); still using the one read before, trying again "
                    + "as the files change", what, files, e.getMessage());
        }
    }

    /**
     * Each file's real path (a renewal may swap a symbolic link), modification time and size: a change
     * to any is a change of the file.
     */
    private List<Object> stamps() throws IOException {
        List<Object> stamps = new ArrayList<>();
        for (Path file : files) {
            stamps.add(file.toRealPath());
            stamps.add(Files.getLastModifiedTime(file));
            stamps.add(Files.size(file));
        }
        return stamps;
    }
}
