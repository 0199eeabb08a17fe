// The main() of every cc_fuzz_test (see fuzz.bzl).
//
// Corpus files come from $FUZZ_CORPUS (space-separated runfiles paths, set by the rule).
// Without libFuzzer: replay them, then $FUZZ_MUTATIONS deterministic mutations. With libFuzzer
// (ROASTCOFFEA_LIBFUZZER): hand over to LLVMFuzzerRunDriver for $FUZZ_SECONDS seconds. Our
// main() wins over libFuzzer's, whose archive member is then never linked.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
#ifdef ROASTCOFFEA_LIBFUZZER
extern "C" int LLVMFuzzerRunDriver(int* argc, char*** argv,
                                   int (*callback)(const uint8_t* data, size_t size));
#endif

namespace {

// $FUZZ_MUTATIONS (cc_fuzz_test's `mutations`), else this.
constexpr int kDefaultMutations = 20000;

int Mutations() {
  const char* text = std::getenv("FUZZ_MUTATIONS");
  const int n = text == nullptr ? 0 : std::atoi(text);
  return n > 0 ? n : kDefaultMutations;
}

std::vector<std::string> CorpusPaths() {
  std::vector<std::string> paths;
  const char* list = std::getenv("FUZZ_CORPUS");
  std::istringstream words(list == nullptr ? "" : list);
  for (std::string path; words >> path;) paths.push_back(path);
  return paths;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz_main: cannot read corpus file %s\n", path.c_str());
    std::exit(1);
  }
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::string Mutate(const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  std::string input = corpus.empty() ? std::string() : corpus[rng() % corpus.size()];
  switch (rng() % 5) {
    case 0:  // flip a few bits
      for (int i = 0, n = 1 + rng() % 8; i < n && !input.empty(); ++i) {
        input[rng() % input.size()] ^= static_cast<char>(1u << (rng() % 8));
      }
      break;
    case 1:  // truncate
      if (!input.empty()) input.resize(rng() % input.size());
      break;
    case 2:  // overwrite a run with one byte value (0x00, 0xff, ...)
      if (!input.empty()) {
        const size_t start = rng() % input.size();
        const size_t length = 1 + rng() % 16;
        const char value = static_cast<char>((rng() % 2) ? 0xff : rng() % 256);
        for (size_t i = start; i < input.size() && i < start + length; ++i) input[i] = value;
      }
      break;
    case 3:  // splice two corpus entries
      if (!corpus.empty()) {
        const std::string& other = corpus[rng() % corpus.size()];
        input = input.substr(0, input.empty() ? 0 : rng() % input.size()) +
                other.substr(other.empty() ? 0 : rng() % other.size());
      }
      break;
    default: {  // random bytes
      input.resize(rng() % 256);
      for (char& c : input) c = static_cast<char>(rng());
    }
  }
  return input;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> corpus;
  for (const std::string& path : CorpusPaths()) corpus.push_back(ReadFile(path));
  for (const std::string& input : corpus) Run(input);
#ifdef ROASTCOFFEA_LIBFUZZER
  (void)argc;
  const char* seconds = std::getenv("FUZZ_SECONDS");
  const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const char* scratch = std::getenv("TEST_TMPDIR");
  std::vector<std::string> arguments = {
      argv[0],
      std::string("-max_total_time=") + (seconds != nullptr ? seconds : "20"),
      "-print_final_stats=1",
      std::string("-artifact_prefix=") + (outputs != nullptr ? outputs : ".") + "/",
  };
  // libFuzzer writes new inputs into its first corpus directory: a scratch one. The corpus
  // files themselves were replayed above and seed the run through the mutations below.
  const std::string seeds = std::string(scratch != nullptr ? scratch : ".") + "/corpus";
  std::system(("mkdir -p '" + seeds + "'").c_str());
  for (size_t i = 0; i < corpus.size(); ++i) {
    std::ofstream(seeds + "/seed-" + std::to_string(i), std::ios::binary) << corpus[i];
  }
  arguments.push_back(seeds);
  std::vector<char*> pointers;
  for (std::string& argument : arguments) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  int count = static_cast<int>(arguments.size());
  char** vector = pointers.data();
  return LLVMFuzzerRunDriver(&count, &vector, LLVMFuzzerTestOneInput);
#else
  (void)argc;
  (void)argv;
  std::mt19937_64 rng(0x5eed);
  const int mutations = Mutations();
  for (int i = 0; i < mutations; ++i) Run(Mutate(corpus, rng));
  std::printf("fuzz_main: replayed %zu corpus files and %d mutations\n", corpus.size(), mutations);
  return 0;
#endif
}
