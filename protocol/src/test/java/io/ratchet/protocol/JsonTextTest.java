package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** A string is written as a JSON string; JSON text is passed as such only when wrapped, and checked then. */
class JsonTextTest {
    @Test
    void aStringIsAJsonStringAndJsonTextIsTakenAsItIs() {
        assertEquals("\"{\\\"a\\\":1}\"", Json.write("{\"a\":1}"));
        assertEquals("{\"a\":1}", Json.write(JsonText.of("{\"a\":1}")));
        assertEquals("{\"v\":{\"a\":1}}", Json.write(Map.of("v", JsonText.of("{\"a\":1}"))), "raw inside other JSON too");
    }

    @Test
    void textThatIsNotOneJsonValueIsRefusedWhenWrapped() {
        assertThrows(InvalidCommandException.class, () -> JsonText.of("{\"a\":1} trailing"));
        assertThrows(InvalidCommandException.class, () -> JsonText.of("{\"a\":"));
        assertThrows(InvalidCommandException.class, () -> JsonText.of(""));
        assertThrows(InvalidCommandException.class, () -> JsonText.of(null));
    }
}
