#!/usr/bin/env python3
"""Writes deeply nested inputs for the nesting-depth tests.

  deep.py scalar DEPTH       a trace.graph whose pyop has a scalar DEPTH deep
  deep.py generic DEPTH      the same in the generic form ({scalars = [...]})
  deep.py regions DEPTH      DEPTH nested regions (scf.execute_region)
  deep.py anf DEPTH          a 2017 trace whose op has a literal DEPTH deep
  deep.py reset DEPTH        DEPTH brackets in steps of 200, each followed by an
                             affine_set whose '>=' must not close a level
"""
import sys

kind, depth = sys.argv[1], int(sys.argv[2])
nest = "[" * depth + "1" + "]" * depth
if kind == "scalar":
    print('trace.graph @g(%x: tensor<2xf32> {trace.input = "x"}) -> tensor<2xf32> {\n'
          f'  %0 = pyop "foo"(%x, {nest}) : (tensor<2xf32>) -> tensor<2xf32>\n'
          '  ret %0 : tensor<2xf32>\n}')
elif kind == "generic":
    print('"trace.graph"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "g"}> ({\n'
          '^bb0(%x: tensor<2xf32>):\n'
          f'  %0 = "trace.pyop"(%x) <{{cconv = "ts", op_name = "foo", scalars = [{nest}]}}> : (tensor<2xf32>) -> tensor<2xf32>\n'
          '  "trace.ret"(%0) : (tensor<2xf32>) -> ()\n}) : () -> ()')
elif kind == "regions":
    print("func.func @f() {\n" + '"scf.execute_region"() ({\n' * depth
          + '"scf.yield"() : () -> ()\n}) : () -> ()\n' * depth + "return\n}")
elif kind == "anf":
    print("graph g\ninput %0 : f32[2] x\n"
          f"%1 = Foo %0, {nest} : f32[2]\nRet %1")
elif kind == "reset":
    step = "[" * 200 + "affine_set<(d0) : (" + ", ".join(["d0>=0"] * 255) + ")>, "
    n = depth // 200
    print("module attributes {trace.a = " + step * n + "1" + "]" * (200 * n) + "} {}")
else:
    sys.exit(f"unknown kind {kind}")
