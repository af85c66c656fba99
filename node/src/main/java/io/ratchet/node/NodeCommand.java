package io.ratchet.node;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ratchet node --conf FILE}: runs one server until the process is told to stop. */
@Command(name = "node", description = "Run a Ratchet server with the given configuration until stopped.")
public final class NodeCommand implements Callable<Integer> {
    @Option(names = "--conf", required = true, description = "the node's properties file, e.g. conf/local-3/n1.properties")
    Path conf;

    @Override
    public Integer call() throws Exception {
        NodeConfig config = NodeConfig.load(conf, Path.of("").toAbsolutePath());
        RatchetNode node = RatchetNode.start(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
            } catch (Exception e) {
                System.err.println("ratchet node " + config.id() + ": stopping failed: " + e);
            } finally {
                stopped.countDown();
            }
        }, "ratchet-shutdown"));
        System.out.printf("ratchet node %s serving group '%s' on %s, storage %s%n",
                config.id(), config.group(), config.peers().get(config.id()), config.storage());
        System.out.flush();
        stopped.await();
        return 0;
    }
}
