package io.ratchet.protocol;

import java.util.Collection;
import java.util.EnumSet;
import java.util.Set;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;

/**
 * The release service, {@code ratchet.internal.Release}: how a leader learns which commands another node's
 * release can apply, before it lets into the log a command that a node of an earlier release could not
 * read (docs/DESIGN.md, "Versions and upgrades"). Nodes only, as {@link SnapshotRpc}.
 *
 * <ul>
 *   <li>{@code Commands} (unary): the request is empty; the answer is the tags of the commands the node's
 *       release applies ({@link Command.Kind}), one byte each. A node of a release before this service
 *       answers {@code UNIMPLEMENTED}: it applies no command past {@link Command.Kind#FENCE}.</li>
 * </ul>
 */
public final class ReleaseRpc {
    public static final String SERVICE = "ratchet.internal.Release";
    public static final MethodDescriptor<byte[], byte[]> COMMANDS = Rpc.method(MethodDescriptor.MethodType.UNARY, SERVICE, "Commands");

    /** The answer naming {@code kinds}. */
    public static byte[] encode(Collection<Command.Kind> kinds) {
        byte[] tags = new byte[kinds.size()];
        int i = 0;
        for (Command.Kind kind : kinds) {
            tags[i++] = kind.tag();
        }
        return tags;
    }

    /** The commands an answer names that this release knows; a later release's tags are left out. */
    public static Set<Command.Kind> decode(byte[] answer) {
        Set<Command.Kind> kinds = EnumSet.noneOf(Command.Kind.class);
        for (byte tag : answer) {
            Command.Kind kind = WireKind.byTag(Command.Kind.values(), tag);
            if (kind != null) {
                kinds.add(kind);
            }
        }
        return kinds;
    }

    private ReleaseRpc() {
    }
}
