// A whole FBX document as a tree of records, read from the binary node layout with 32-bit offsets
// (FBX 6.x and 7.x before 7.5) or from ASCII text of FBX 6.x and earlier, and a writer of FBX 7.4
// binary records. The FBX 6.x upgrade (importers/fbx_upgrade.h) reads an old file with it and
// writes the file Assimp reads.
//
// Untrusted input: every offset, length and count is checked against the bytes, nesting is
// bounded, and a deflated array may not expand past what its header states nor past a bound
// proportional to the file: a corrupt file gives nullopt, never a read outside the bytes or an
// allocation the file's size does not justify.
#ifndef RIGEL_IMPORTERS_FBX_TREE_H_
#define RIGEL_IMPORTERS_FBX_TREE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rigel::fbx_tree {

// One value of a record. Binary files type each value (I, L, D, F, S, C, arrays); ASCII text has
// numbers (`is_int` when written without a fraction or exponent), quoted strings and bare words
// (`T`, `U`, `s`: characters, kept as strings).
struct Value {
  enum Kind { kNumber, kString, kArray };
  Kind kind = kNumber;
  bool is_int = false;
  std::int64_t i = 0;  // the number, when is_int
  double d = 0;        // the number (also when is_int)
  std::string s;       // a string or a bare word; a binary 'C' value as one character
  std::vector<double> array;
};

struct Node {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> children;

  // The first child named `n`, or null.
  const Node* Child(std::string_view n) const;
  // The value at `k` as a string ("" when it is none).
  std::string_view Str(std::size_t k) const;
  // Every number of the record, arrays flattened (ASCII writes an array as a list of numbers).
  std::vector<double> Numbers() const;
};

struct Document {
  bool binary = false;
  int version = 0;  // FBXHeaderExtension/FBXVersion, else the binary header's
  std::vector<Node> top;
};

// Reads a binary document whose header version is below 7500 (32-bit offsets) or an ASCII one;
// nullopt when the bytes are neither or are malformed.
std::optional<Document> ReadFbxTree(std::string_view bytes);

// An FBX 7.4 binary record being written: its properties are encoded as they are added.
class Out {
 public:
  explicit Out(std::string name) : name_(std::move(name)) {}
  Out& I(std::int32_t v);
  Out& L(std::int64_t v);
  Out& D(double v);
  Out& S(std::string_view v);
  Out& C(char v);
  Out& Doubles(const std::vector<double>& v);
  Out& Ints(const std::vector<std::int32_t>& v);
  Out& Longs(const std::vector<std::int64_t>& v);
  Out& Floats(const std::vector<float>& v);
  Out& Add(std::string child) {
    children_.emplace_back(std::move(child));
    return children_.back();
  }
  // Appends the record to `out` (32-bit offsets, 13-byte null record after children).
  void Encode(std::string* out) const;

 private:
  std::string name_;
  std::string props_;
  std::uint32_t count_ = 0;
  std::vector<Out> children_;
};

// An FBX 7.4 binary file of `top` records (header, records, footer).
std::string EncodeFbx74(const std::vector<Out>& top);

}  // namespace rigel::fbx_tree

#endif  // RIGEL_IMPORTERS_FBX_TREE_H_
