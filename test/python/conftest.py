import os
import sys

# traceir_testing lives beside the tests.
sys.path.insert(0, os.path.dirname(__file__))
