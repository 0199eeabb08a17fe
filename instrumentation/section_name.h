// SectionName: the name of a section scope (sections.h), constructible only from a string
// literal or another constant character array, never from a `const char*` or std::string.
//
//   roastcoffea::ScopedTimer timer("select_jets");                  // a literal: fine
//   roastcoffea::ScopedTimer timer(name.c_str());                   // does not compile
//   constexpr roastcoffea::SectionName kSteps[] = {"read", "fill"}; // a table of literals
//
// Why (Perfetto's StaticString is the model): sections are keyed by the name's address on the
// hot path and interned once per chunk record, so a name must outlive its chunk, and a run must
// not pass a new string per event (a chunk would hold thousands of "sections" of one entry
// each and its record would grow without bound). A literal satisfies both, and the type makes
// the compiler check it.
#ifndef ROASTCOFFEA_INSTRUMENTATION_SECTION_NAME_H_
#define ROASTCOFFEA_INSTRUMENTATION_SECTION_NAME_H_

#include <cstddef>

namespace roastcoffea {

class SectionName {
 public:
  // Implicit, so that scopes take a literal as is. Binds string literals and `const char`
  // arrays (static storage is the caller's promise for the latter, as with Perfetto).
  template <size_t N>
  constexpr SectionName(const char (&literal)[N])  // NOLINT(google-explicit-constructor)
      : name_(literal) {}
  // A writable array may be rewritten between chunks: not a stable name.
  template <size_t N>
  SectionName(char (&buffer)[N]) = delete;  // NOLINT(google-explicit-constructor)

  constexpr const char* c_str() const { return name_; }

 private:
  const char* name_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_SECTION_NAME_H_
