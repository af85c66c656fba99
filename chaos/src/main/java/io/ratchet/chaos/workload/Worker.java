package io.ratchet.chaos.workload;

/** What one client process of a workload does, one step at a time. Not shared between processes. */
public interface Worker {
    /** Runs one operation, or one short protocol (acquire, write, release), and records it. */
    void step(ClientProcess process);

    /** Called once after the last step: gives back anything the process still holds. */
    default void finish(ClientProcess process) {
    }
}
