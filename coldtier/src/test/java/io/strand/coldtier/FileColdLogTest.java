package io.strand.coldtier;

class FileColdLogTest extends ColdLogContract {
    @Override
    ColdStore openStore() {
        return new FileColdStore(tmp.resolve("cold"));
    }
}
