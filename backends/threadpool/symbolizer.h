// Internal to //backends/threadpool: turns code addresses of this process into profile frames
// (demangled function name and the object file it is in), after a profiling run.
//
// dladdr finds the object (executable or shared library) and its load bias; the function is
// looked up in that object's ELF symbol table (.symtab, else .dynsym), read from the file once
// per object. dladdr's own answer only covers exported symbols, which misses static and
// anonymous-namespace functions and everything in an executable not linked with -rdynamic.
// .symtab is read with a small bounds-checked parser rather than libelf/libdw: function
// symbols are all we need (the default and -c opt builds carry no line tables, so libdw
// would add a dependency without adding lines), and the files are this process's own.
//
// Thread-safety: one Symbolizer per thread; not for signal handlers (it allocates and reads
// files).
#ifndef ROASTCOFFEA_BACKENDS_THREADPOOL_SYMBOLIZER_H_
#define ROASTCOFFEA_BACKENDS_THREADPOOL_SYMBOLIZER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace threadpool_internal {

// One function symbol of an ELF file: [address, address + size) relative to the object's
// load bias (size 0: unknown, the symbol covers up to the next one).
struct ElfFunctionSymbol {
  uint64_t address = 0;
  uint64_t size = 0;
  std::string name;  // as stored (mangled)
};

// The function symbols of the ELF file at `path`, sorted by address: .symtab when present,
// else .dynsym. NotFound/PermissionDenied when the file cannot be opened, InvalidArgument
// naming the path when it is not a well-formed 64-bit ELF file of this machine's byte order.
absl::StatusOr<std::vector<ElfFunctionSymbol>> ReadElfFunctionSymbols(const std::string& path);

// The start addresses (relative to the load bias, as in the file) of every function that has
// unwind information in the ELF file at `path`, sorted: the initial locations of the binary
// search table of its .eh_frame_hdr (PT_GNU_EH_FRAME), which GCC and Clang emit for every
// function, stripped or not. Empty when the file has no such table or one in an encoding other
// than the usual (DW_EH_PE_datarel | sdata4 entries, udata4 count). Errors as
// ReadElfFunctionSymbols.
absl::StatusOr<std::vector<uint64_t>> ReadEhFrameFunctionStarts(const std::string& path);

// abi::__cxa_demangle of `name`, or `name` itself when it is not a mangled C++ name.
std::string Demangle(const std::string& name);

struct SymbolizedFrame {
  // Demangled; for a function the object has no symbol for (a stripped library),
  // "<object file name>+0x<start>" with the function's start from the unwind tables
  // (ReadEhFrameFunctionStarts: the address objdump and addr2line use), or "??" when even
  // that is unknown; "0x<hex>" when the address is in no loaded object.
  std::string function;
  std::string object;  // path of the executable or shared library; "" when unknown
};

class Symbolizer {
 public:
  // `pc` is an address inside the function wanted: for a return address pass pc - 1, so that
  // a call that ends a function is not attributed to the next one.
  SymbolizedFrame Symbolize(uintptr_t pc);

 private:
  struct ObjectSymbols {
    std::string display_path;
    std::vector<ElfFunctionSymbol> functions;  // sorted; empty when unreadable
    std::vector<uint64_t> unwind_starts;       // sorted; empty when unreadable
  };
  const ObjectSymbols& SymbolsOf(const std::string& key, const std::string& file_path,
                                 const std::string& display_path);

  std::map<std::string, ObjectSymbols> objects_;  // by the loader's name of the object
};

}  // namespace threadpool_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_THREADPOOL_SYMBOLIZER_H_
