package io.ratchet.chaos.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ResourceSamplerTest {
    @Test
    void theHeapInUseIsTheGenerationsNotMetaspace() {
        String serial = """
                12345:
                 def new generation   total 4928K, used 1127K [0x00000000e0000000, 0x00000000e0550000, 0x00000000eaaa0000)
                  eden space 4416K,  25% used [0x00000000e0000000, 0x00000000e0119f20, 0x00000000e0450000)
                  from space 512K,   0% used [0x00000000e0450000, 0x00000000e0450000, 0x00000000e04d0000)
                 tenured generation   total 10944K, used 6489K [0x00000000eaaa0000, 0x00000000eb550000, 0x0000000100000000)
                   the space 10944K,  59% used [0x00000000eaaa0000, 0x00000000eb0f6558, 0x00000000eb0f6600, 0x00000000eb550000)
                 Metaspace       used 10214K, committed 10432K, reserved 1114112K
                  class space    used 1050K, committed 1152K, reserved 1048576K
                """;
        assertEquals((1127 + 6489) * 1024L, ResourceSampler.heapUsed(serial));
        String g1 = """
                 garbage-first heap   total 262144K, used 20479K [0x00000000f0000000, 0x0000000100000000)
                  region size 1024K, 5 young (5120K), 0 survivors (0K)
                 Metaspace       used 812K, committed 1024K, reserved 1114112K
                """;
        assertEquals(20479 * 1024L, ResourceSampler.heapUsed(g1));
        assertEquals(-1, ResourceSampler.heapUsed("12345: AttachNotSupportedException"));
    }
}
