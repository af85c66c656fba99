package io.ratchet.statemachine;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The files of a store's checkpoint as one stream, the state of a backup of format 2 and what a follower
 * fetches from the leader: a count (4 bytes), then each file's name (2-byte length, UTF-8; a plain name,
 * no directory), its length (8 bytes) and its bytes, in name order. {@link Unpacker} writes such a stream
 * back into a directory as it arrives, never holding more than a piece of it.
 */
public final class CheckpointArchive {
    /** A checkpoint is tens to thousands of files; more means damage. */
    static final int MAX_FILES = 1 << 20;
    static final int MAX_NAME_BYTES = 255;

    private final List<Path> files;
    private final long bytes;

    private CheckpointArchive(List<Path> files, long bytes) {
        this.files = files;
        this.bytes = bytes;
    }

    /** The archive of the files in {@code dir} (a checkpoint: plain files, no subdirectories). */
    public static CheckpointArchive of(Path dir) throws IOException {
        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = new ArrayList<>(list.toList());
        }
        Collections.sort(files);
        long bytes = Integer.BYTES;
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                throw new IOException(f + " in a checkpoint is not a plain file");
            }
            bytes += 2 + name(f).length + Long.BYTES + Files.size(f);
        }
        return new CheckpointArchive(List.copyOf(files), bytes);
    }

    private static byte[] name(Path f) {
        return f.getFileName().toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The archive's length in bytes. */
    public long bytes() {
        return bytes;
    }

    /** The archive's bytes, read from the files as the stream is read; the caller closes it. */
    public InputStream open() {
        Iterator<Supplier<InputStream>> parts = parts().iterator();
        return new SequenceInputStream(new java.util.Enumeration<>() {
            @Override
            public boolean hasMoreElements() {
                return parts.hasNext();
            }

            @Override
            public InputStream nextElement() {
                if (!parts.hasNext()) {
                    throw new NoSuchElementException();
                }
                return parts.next().get();
            }
        });
    }

    private List<Supplier<InputStream>> parts() {
        List<Supplier<InputStream>> parts = new ArrayList<>();
        parts.add(() -> new ByteArrayInputStream(ByteArrays.intBytes(files.size())));
        for (Path f : files) {
            parts.add(() -> {
                try {
                    ByteArrayOutputStream head = new ByteArrayOutputStream();
                    DataOutputStream out = new DataOutputStream(head);
                    byte[] name = name(f);
                    out.writeShort(name.length);
                    out.write(name);
                    out.writeLong(Files.size(f));
                    return new SequenceInputStream(new ByteArrayInputStream(head.toByteArray()), Files.newInputStream(f));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        return parts;
    }

    /**
     * Writes an archive into a directory as its bytes arrive, in any pieces, checking names and lengths as
     * they come. {@link #finish} syncs the files and says whether the archive was whole. Not thread-safe.
     */
    public static final class Unpacker implements AutoCloseable {
        private final Path dir;
        private final String source;
        private final ByteArrayOutputStream head = new ByteArrayOutputStream();
        private int filesLeft = -1;
        private long fileLeft = -1;
        private OutputStream file;
        private final List<Path> written = new ArrayList<>();

        /** @param dir where the files go: made now, must not exist */
        public Unpacker(Path dir, String source) throws IOException {
            this.dir = dir;
            this.source = source;
            Files.createDirectory(dir);
        }

        public void accept(byte[] bytes, int offset, int length) throws IOException {
            int at = offset;
            int end = offset + length;
            while (at < end) {
                if (file != null) {
                    int n = (int) Math.min(fileLeft, end - at);
                    file.write(bytes, at, n);
                    at += n;
                    fileLeft -= n;
                    if (fileLeft == 0) {
                        closeFile();
                    }
                    continue;
                }
                if (filesLeft == 0) {
                    throw new IOException(source + " goes on past its last file");
                }
                head.write(bytes[at++]);
                parseHead();
            }
        }

        /** Reads the count, or a file's name and length, once their bytes are all in. */
        private void parseHead() throws IOException {
            byte[] h = head.toByteArray();
            if (filesLeft < 0) {
                if (h.length == Integer.BYTES) {
                    filesLeft = ByteArrays.getInt(h, 0);
                    head.reset();
                    if (filesLeft < 0 || filesLeft > MAX_FILES) {
                        throw new IOException(source + " is damaged: it says it holds " + filesLeft + " files");
                    }
                }
                return;
            }
            if (h.length < 2) {
                return;
            }
            int nameBytes = ((h[0] & 0xff) << 8) | (h[1] & 0xff);
            if (nameBytes == 0 || nameBytes > MAX_NAME_BYTES) {
                throw new IOException(source + " is damaged: a file name of " + nameBytes + " bytes");
            }
            if (h.length < 2 + nameBytes + Long.BYTES) {
                return;
            }
            String name = new String(h, 2, nameBytes, StandardCharsets.UTF_8);
            if (name.contains("/") || name.contains("\\") || name.equals(".") || name.equals("..")) {
                throw new IOException(source + " is damaged: '" + name + "' is no plain file name");
            }
            fileLeft = ByteArrays.getLong(h, 2 + nameBytes);
            if (fileLeft < 0) {
                throw new IOException(source + " is damaged: file " + name + " has length " + fileLeft);
            }
            head.reset();
            Path target = dir.resolve(name);
            file = new java.io.BufferedOutputStream(Files.newOutputStream(target, java.nio.file.StandardOpenOption.CREATE_NEW), 1 << 16);
            written.add(target);
            if (fileLeft == 0) {
                closeFile();
            }
        }

        private void closeFile() throws IOException {
            file.close();
            file = null;
            filesLeft--;
        }

        /** After the last bytes: syncs every file and the directory; fails when the archive stopped short. */
        public void finish() throws IOException {
            if (filesLeft != 0 || file != null) {
                throw new IOException(source + " is truncated: it ends inside its archive of files");
            }
            for (Path f : written) {
                try (var channel = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.WRITE)) {
                    channel.force(true);
                }
            }
            Directories.sync(dir);
        }

        @Override
        public void close() throws IOException {
            if (file != null) {
                file.close();
                file = null;
            }
        }
    }
}
