package io.ratchet.statemachine.kv;

/** The heap store the unit tests run on keeps the contract the disk store keeps. */
class MemoryKeyValueStoreTest extends KeyValueStoreContract {
    @Override
    protected KeyValueStore open() {
        return new MemoryKeyValueStore();
    }
}
