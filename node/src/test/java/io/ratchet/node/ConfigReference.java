package io.ratchet.node;

import static io.ratchet.node.ReferencePage.cell;
import static io.ratchet.node.ReferencePage.code;

/**
 * {@code docs/reference/config.md}, generated from {@link NodeConfig#KEYS}: every key a node's configuration
 * file accepts, with its default and meaning, in the list's order. {@link NodeConfig#load} reads no key that
 * is not in that list, so the page names every key a node takes.
 */
final class ConfigReference {
    private ConfigReference() {
    }

    static String page() {
        StringBuilder out = new StringBuilder();
        out.append("# Node configuration reference\n\n");
        out.append("Generated from `NodeConfig.KEYS` (node/src/main/java/io/ratchet/node/NodeConfig.java) by "
                + "`ConfigReferenceTest`: do not edit it by hand.\n\n");
        out.append("A node reads one Java properties file, given with `--conf` (`java -jar ratchet-node.jar --conf "
                + "conf/local-3/n1.properties`, or a release's `bin/ratchet-node --conf FILE`); `conf/local-3/` and "
                + "`conf/local-5/` hold commented examples, and a release's `conf/ratchet.conf` every key. Relative "
                + "paths (`storage`, `tls.*`) are resolved against the directory the node is started in. Sizes take "
                + "bytes or a binary unit (`512MiB`, `8GiB`). A key the node does not know is ignored.\n\n");
        out.append("| Key | Default | Description |\n");
        out.append("|---|---|---|\n");
        for (NodeConfig.Key key : NodeConfig.KEYS) {
            out.append("| ").append(code(key.name())).append(" | ")
                    .append(key.defaultValue() == null ? "" : code(key.defaultValue())).append(" | ")
                    .append(cell(key.description())).append(" |\n");
        }
        return out.toString();
    }
}
