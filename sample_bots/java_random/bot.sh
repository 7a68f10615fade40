#!/bin/sh
# Run the Java starter bot (build it first: javac -d build RandomBot.java, or `make kits`).
# A small heap and the client compiler: the JVM starts fast and fits the arena's memory limit.
# -XX:-UsePerfData: no hsperfdata file, whose flock() the sandbox refuses (a warning on stdout).
exec java -Xmx64m -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=32m -XX:-UsePerfData \
    -cp "$(dirname "$0")/build" RandomBot "$@"
