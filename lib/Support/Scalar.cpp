//===- Scalar.cpp - Decoding a call's Python scalars ----------------------===//

#include "TraceIR/Support/Scalar.h"

#include <charconv>

using namespace traceir;

Scalar traceir::decodeScalar(const ScalarValue &value) {
  using VK = ScalarValue::Kind;
  using K = Scalar::Kind;
  Scalar s;
  switch (value.kind) {
  case VK::None:
    s.kind = K::None;
    break;
  case VK::Bool:
    s.kind = K::Bool;
    s.b = value.b;
    s.i = value.b;
    break;
  case VK::Int:
    s.kind = K::Int;
    s.i = value.i;
    s.ints.push_back(value.i);
    break;
  case VK::Float:
    s.kind = K::Float;
    s.f = value.f;
    break;
  case VK::String:
    s.kind = K::String;
    s.s = value.s;
    break;
  case VK::List:
  case VK::Tuple: {
    // All ints, or all bools (output_mask reads like a list of 0/1 ints).
    bool ints = true, bools = true, numbers = true;
    for (const ScalarValue &e : value.elements) {
      ints = ints && e.kind == VK::Int;
      bools = bools && e.kind == VK::Bool;
      numbers = numbers && (e.kind == VK::Int || e.kind == VK::Float);
    }
    if (numbers)
      for (const ScalarValue &e : value.elements)
        s.numbers.push_back(e.kind == VK::Int ? double(e.i) : e.f);
    if (ints || bools) {
      s.kind = K::IntList;
      for (const ScalarValue &e : value.elements)
        s.ints.push_back(ints ? e.i : int64_t(e.b));
    } else {
      s.kind = K::Other;
      s.s = scalarLiteral(value);
    }
    break;
  }
  }
  return s;
}

std::string traceir::scalarLiteral(const ScalarValue &value) {
  using VK = ScalarValue::Kind;
  switch (value.kind) {
  case VK::None:
    return "None";
  case VK::Bool:
    return value.b ? "True" : "False";
  case VK::Int:
    return std::to_string(value.i);
  case VK::Float: {
    // The shortest text that reads back to the same double, as Python's
    // repr (and the IR's printer) writes it.
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value.f);
    std::string text(buf, ec == std::errc() ? end : buf);
    if (text.find_first_of(".eninf") == std::string::npos)
      text += ".0";
    return text;
  }
  case VK::String: {
    std::string out = "\"";
    for (char c : value.s) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    return out + "\"";
  }
  case VK::List:
  case VK::Tuple: {
    bool tuple = value.kind == VK::Tuple;
    std::string out = tuple ? "(" : "[";
    for (size_t k = 0; k < value.elements.size(); ++k)
      out += (k ? ", " : "") + scalarLiteral(value.elements[k]);
    if (tuple && value.elements.size() == 1)
      out += ",";
    return out + (tuple ? ")" : "]");
  }
  }
  return "?";
}
