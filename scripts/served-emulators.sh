#!/usr/bin/env bash
# Prints the conformance rows `make test` leaves to `make test-served-emulators`: the
# served rows of the backends tested here against emulators.
echo cosmos-served,firestore-served,spanner-served,servicebus-served
