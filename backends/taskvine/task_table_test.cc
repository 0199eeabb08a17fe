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

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
