package io.ratchet.statemachine.kv;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.rocksdb.RocksDB;
import org.rocksdb.util.Environment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads RocksDB's native library once per machine rather than once per start: RocksDB's own loader
 * copies the library (17 MB) out of its jar into a new temporary file at every start, a good part of a
 * node's start-up on a small machine. Here it is copied once into a directory named by the library's
 * size and checksum in the jar, and loaded from there by every later start; anything unexpected falls
 * back to RocksDB's own loader.
 */
final class NativeLibrary {
    private static final Logger LOG = LoggerFactory.getLogger(NativeLibrary.class);

    private NativeLibrary() {
    }

    static void load() {
        try {
            String resource = Environment.getJniLibraryFileName("rocksdb");
            URL url = RocksDB.class.getClassLoader().getResource(resource);
            if (url != null) {
                URLConnection connection = url.openConnection();
                String key = connection.getContentLengthLong() + (connection instanceof JarURLConnection jar
                        ? "-" + Long.toHexString(jar.getJarEntry().getCrc()) : "");
                Path dir = Path.of(System.getProperty("java.io.tmpdir"), "ratchet-rocksdb-" + key);
                if (!ownDirectory(dir)) {
                    throw new IOException(dir + " is not this user's alone");
                }
                // The name RocksDB's loadLibrary(paths) looks for in each directory.
                Path file = dir.resolve(Environment.getJniLibraryFileName("rocksdbjni"));
                if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
                        || Files.size(file) != connection.getContentLengthLong()) {
                    Path tmp = Files.createTempFile(dir, "lib", ".tmp");
                    try (InputStream in = connection.getInputStream()) {
                        Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                    }
                    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                }
                RocksDB.loadLibrary(List.of(dir.toString()));
                return;
            }
        } catch (IOException | RuntimeException | UnsatisfiedLinkError e) { // also a file system without POSIX attributes
            LOG.debug("loading RocksDB's library from a kept copy failed; its own loader will", e);
        }
        RocksDB.loadLibrary();
    }

    /**
     * Makes {@code dir} (mode 700) when it is missing, and says whether it is a directory only this user
     * can write to: the temporary directory is shared, and a library another user could place or swap
     * there would run inside the node.
     */
    private static boolean ownDirectory(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException raced) {
                // another start made it meanwhile: checked below like any other
            }
        }
        PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        String me = System.getProperty("user.name");
        return a.isDirectory() && a.owner().getName().equals(me)
                && a.permissions().equals(PosixFilePermissions.fromString("rwx------"));
    }
}
