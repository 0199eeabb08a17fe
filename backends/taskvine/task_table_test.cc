#include "backends/taskvine/task_table.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace taskvine {
namespace {

TEST(TaskTable, DenseAndSparseIds) {
  TaskTable<std::string> table;
  EXPECT_TRUE(table.empty());
  for (int64_t id :
       {int64_t{3}, int64_t{1}, int64_t{2}, int64_t{5000000000}, int64_t{-7}, int64_t{100000}}) {
    auto [value, inserted] = table.try_emplace(id);
    EXPECT_TRUE(inserted) << id;
    *value = std::to_string(id);
  }
  EXPECT_FALSE(table.try_emplace(2).second);
  EXPECT_EQ(table.size(), 6u);
  EXPECT_EQ(table.at(5000000000LL), "5000000000");
  EXPECT_EQ(table.at(-7), "-7");
  EXPECT_EQ(table.count(4), 0u);
  EXPECT_EQ(table.find(0), nullptr);
  EXPECT_THROW(table.at(4), std::out_of_range);
  std::map<int64_t, std::string> seen;
  for (const auto& [id, value] : table) seen[id] = value;
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[100000], "100000");
  table.erase(2);
  table.erase(-7);
  table.erase(99);  // absent: nothing happens
  EXPECT_EQ(table.size(), 4u);
  EXPECT_FALSE(table.contains(2));
  EXPECT_FALSE(table.contains(-7));
  const TaskTable<std::string> copy = table;
  EXPECT_EQ(copy.size(), 4u);
  EXPECT_EQ(copy.at(3), "3");
  int visited = 0;
  for (const auto& entry : table) visited += !entry.second.empty();
  EXPECT_EQ(visited, 4);
}

TEST(TaskTable, ReleaseDenseBelowFreesWholeBlocksOnly) {
  TaskTable<std::string> table;
  for (int64_t id = 1; id <= 10000; ++id) *table.try_emplace(id).first = std::to_string(id);
  *table.try_emplace(-3).first = "-3";
  table.ReleaseDenseBelow(5000);  // block [0, 4096) is freed; 4096.. stays
  EXPECT_EQ(table.size(), 10000u - 4095u + 1u);
  EXPECT_FALSE(table.contains(1));
  EXPECT_FALSE(table.contains(4095));
  EXPECT_EQ(table.at(4096), "4096");
  EXPECT_EQ(table.at(10000), "10000");
  EXPECT_EQ(table.at(-3), "-3");  // sparse: untouched
  int64_t first = 0, visited = 0;
  for (const auto& [id, value] : table) {
    if (visited++ == 0) first = id;
  }
  EXPECT_EQ(first, 4096);
  EXPECT_EQ(visited, static_cast<int64_t>(table.size()));
  const TaskTable<std::string> copy = table;  // released blocks copy as released
  EXPECT_EQ(copy.size(), table.size());
  EXPECT_FALSE(copy.contains(2));
  // A freed id can come back: its block is allocated again, and released again later.
  auto [value, inserted] = table.try_emplace(7);
  EXPECT_TRUE(inserted);
  EXPECT_TRUE(value->empty());
  EXPECT_TRUE(table.contains(7));
  table.ReleaseDenseBelow(20000);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_FALSE(table.contains(7));
  EXPECT_FALSE(table.contains(10000));
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
