import os
import sys

# traceir_testing lives beside the tests; the traceir package is built into
# $TRACEIR_BUILD/python (default build/python).
HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.environ.get(
    "TRACEIR_BUILD", os.path.join(HERE, "..", "..", "build")), "python"))
