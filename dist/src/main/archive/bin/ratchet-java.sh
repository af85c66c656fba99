# Sourced by bin/ratchet-node and bin/ratchet once they have set RATCHET_TOOL (their name, for messages):
# defines die, and sets JAVA to the java they run, or says why there is none and exits 1.
#
# JAVA is $JAVA_HOME/bin/java when JAVA_HOME is set, else the java on PATH. It must be Java 17 or later,
# what the jars are compiled for: an older one would stop at the first class with an
# UnsupportedClassVersionError. The version is read from the JDK's release file, not by starting a JVM
# (a command's start-up is most of its time); a java without that file is taken as it is.

# Prints "$RATCHET_TOOL: MESSAGE" on stderr and exits with CODE (default 1).
die() {
  echo "$RATCHET_TOOL: $1" >&2
  exit "${2:-1}"
}

RATCHET_MIN_JAVA=17
if [ -n "${JAVA_HOME:-}" ]; then
  JAVA="$JAVA_HOME/bin/java"
  [ -x "$JAVA" ] || die "JAVA_HOME is $JAVA_HOME, which has no bin/java: point it at a Java $RATCHET_MIN_JAVA (or later) installation, or unset it to use the java on PATH"
else
  JAVA="$(command -v java || true)"
  [ -n "$JAVA" ] || die "no java on PATH: install Java $RATCHET_MIN_JAVA or later (Debian and Ubuntu: apt-get install openjdk-17-jre-headless), or set JAVA_HOME"
fi
java_release="$(readlink -f "$JAVA")"
java_release="${java_release%/bin/java}/release"
if [ -r "$java_release" ]; then
  java_version="$(sed -n 's/^JAVA_VERSION="\(.*\)"$/\1/p' "$java_release")"
  java_major="${java_version#1.}"     # 1.8.0_402 is Java 8
  java_major="${java_major%%[._-]*}"
  if [[ "$java_major" =~ ^[0-9]+$ ]] && [ "$java_major" -lt "$RATCHET_MIN_JAVA" ]; then
    die "$JAVA is Java $java_version; Ratchet needs Java $RATCHET_MIN_JAVA or later (set JAVA_HOME to one)"
  fi
fi
