#!/bin/sh
# The fixture's project: one command, run at build time and by tests.
echo "hello from the devcontainer"
