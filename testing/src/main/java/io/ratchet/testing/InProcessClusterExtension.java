package io.ratchet.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A fresh {@link InProcessCluster} for each test, closed when the test ends (pass or fail): declare an
 * {@code InProcessCluster} parameter on the test class's constructor, a test method or a
 * {@code @BeforeEach} method, and extend the class with this.
 *
 * <pre>{@code
 * @ExtendWith(InProcessClusterExtension.class)
 * class InventoryTest {
 *     @Test
 *     void reservesOnce(InProcessCluster cluster) { ... cluster.client() ... }
 * }
 * }</pre>
 *
 * Within one test every such parameter is the same cluster, so a constructor and the test method see one
 * store. JUnit's own {@code ExtensionContext.Store} closes it; no {@code @AfterEach} is needed.
 */
public final class InProcessClusterExtension implements ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(InProcessClusterExtension.class);

    /** A constructor's parameter is the test method's cluster too (JUnit 5.12 or later), not one per class. */
    @Override
    public ExtensionContextScope getTestInstantiationExtensionContextScope(ExtensionContext root) {
        return ExtensionContextScope.TEST_METHOD;
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == InProcessCluster.class;
    }

    @Override
    public InProcessCluster resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getStore(NAMESPACE)
                .getOrComputeIfAbsent(InProcessCluster.class, type -> new Closing(new InProcessCluster()), Closing.class)
                .cluster;
    }

    /** The store closes what implements its own resource interface; this adapts the cluster to it. */
    private record Closing(InProcessCluster cluster) implements ExtensionContext.Store.CloseableResource {
        @Override
        public void close() {
            cluster.close();
        }
    }
}
