package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** A backup is verified in one pass, in any pieces, and nothing short of the whole intact file passes. */
class BackupCheckTest {
    private static final byte[] STATE = "the state: any bytes, a snapshot file in a real backup".getBytes(StandardCharsets.UTF_8);
    private static final BackupHeader HEADER = new BackupHeader("ratchet", UUID.randomUUID(), 3, 1234, 1_700_000_000_000L,
            STATE.length);

    private static byte[] backup() {
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        file.writeBytes(HEADER.encode());
        file.writeBytes(STATE);
        MessageDigest digest = BackupHeader.newDigest();
        digest.update(file.toByteArray());
        file.writeBytes(digest.digest());
        return file.toByteArray();
    }

    private static BackupCheck.Verified check(byte[] bytes, int pieceBytes) throws InvalidBackupException {
        BackupCheck check = new BackupCheck("b.rbk");
        for (int at = 0; at < bytes.length; at += pieceBytes) {
            check.accept(bytes, at, Math.min(pieceBytes, bytes.length - at));
        }
        return check.finish();
    }

    @Test
    void aWholeBackupPassesInPiecesOfAnySize() throws Exception {
        byte[] file = backup();
        assertEquals(HEADER.fileBytes(), file.length);
        String sha256 = HexFormat.of().formatHex(BackupHeader.newDigest().digest(file));
        for (int piece : List.of(1, 2, 7, 57, 64, file.length)) {
            BackupCheck.Verified verified = check(file, piece);
            assertEquals(HEADER, verified.header());
            assertEquals(file.length, verified.bytes());
            assertEquals(sha256, verified.sha256(), "the digest of the whole file, as sha256sum prints it");
        }
    }

    @Test
    void everyTruncationIsRefusedAsTruncated() {
        byte[] file = backup();
        for (int length = 0; length < file.length; length++) {
            byte[] cut = Arrays.copyOf(file, length);
            String message = assertThrows(InvalidBackupException.class, () -> check(cut, 16)).getMessage();
            assertTrue(message.startsWith("b.rbk is truncated"), length + ": " + message);
        }
    }

    @Test
    void aByteFlippedAnywhereIsRefusedNamingWhatIsWrong() {
        byte[] file = backup();
        Random random = new Random(13);
        for (int at = 0; at < file.length; at++) {
            byte[] flipped = file.clone();
            flipped[at] ^= (byte) (1 << random.nextInt(8));
            String message = assertThrows(InvalidBackupException.class, () -> check(flipped, 16), "byte " + at).getMessage();
            assertTrue(message.startsWith("b.rbk "), message);
            assertTrue(List.of("not a Ratchet backup", "backup format", "damaged", "truncated", "SHA-256").stream()
                    .anyMatch(message::contains), at + ": " + message);
        }
    }

    @Test
    void bytesBeyondTheAnnouncedEndAreRefused() {
        byte[] longer = Arrays.copyOf(backup(), backup().length + 1);
        String message = assertThrows(InvalidBackupException.class, () -> check(longer, 16)).getMessage();
        assertTrue(message.contains("goes on past the " + HEADER.fileBytes() + " bytes"), message);
    }

    @Test
    void theHeaderReadsBackAsWritten() throws Exception {
        BackupCheck check = new BackupCheck("b.rbk");
        byte[] head = HEADER.encode();
        check.accept(head, 0, head.length - 1);
        assertEquals(null, check.header(), "one byte short of a header is no header yet");
        check.accept(head, head.length - 1, 1);
        assertEquals(HEADER, check.header());
        assertArrayEquals(head, check.header().encode());
    }
}
