#include "schema/chunk_info_rows.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

v1::ChunkInfo Message(const std::string& file, int64_t start, uint32_t attempt) {
  v1::ChunkInfo info;
  info.set_file(file);
  info.set_entry_start(start);
  info.set_entry_stop(start + 10);
  info.set_attempt(attempt);
  info.set_start_unix_ns(1000 + start);
  info.set_end_unix_ns(2000 + start);
  info.set_bytes_read(4096 + start);
  return info;
}

void AddRow(const v1::ChunkInfo& info, v1::ChunkInfoColumns* c) {
  uint32_t file = 0;
  while (file < static_cast<uint32_t>(c->files_size()) && c->files(file) != info.file()) ++file;
  if (file == static_cast<uint32_t>(c->files_size())) c->add_files(info.file());
  c->add_file_index(file);
  c->add_entry_start(info.entry_start());
  c->add_entry_stop(info.entry_stop());
  c->add_attempt(info.attempt());
  c->add_start_unix_ns(info.start_unix_ns());
  c->add_end_unix_ns(info.end_unix_ns());
  c->add_bytes_read(info.bytes_read());
}

std::vector<v1::ChunkInfo> Rows(const v1::ChunkMetrics& chunks) {
  std::vector<v1::ChunkInfo> rows;
  ForEachChunkInfo(chunks, [&](const ChunkInfoRow& row) {
    v1::ChunkInfo info;
    info.set_file(std::string(row.file));
    info.set_entry_start(row.entry_start);
    info.set_entry_stop(row.entry_stop);
    info.set_attempt(row.attempt);
    info.set_start_unix_ns(row.start_unix_ns);
    info.set_end_unix_ns(row.end_unix_ns);
    info.set_bytes_read(row.bytes_read);
    rows.push_back(info);
  });
  return rows;
}

const std::vector<v1::ChunkInfo> kEntries = {Message("a.root", 0, 0), Message("b.root", 10, 0),
                                             Message("a.root", 20, 1)};

void ExpectRows(const v1::ChunkMetrics& chunks) {
  const std::vector<v1::ChunkInfo> rows = Rows(chunks);
  ASSERT_EQ(rows.size(), kEntries.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].SerializeAsString(), kEntries[i].SerializeAsString()) << i;
  }
  EXPECT_EQ(ChunkInfoSize(chunks), kEntries.size());
}

TEST(ChunkInfoRowsTest, ColumnsAndOldMessagesReadTheSame) {
  v1::ChunkMetrics columns;
  v1::ChunkMetrics messages;
  for (const v1::ChunkInfo& info : kEntries) {
    AddRow(info, columns.mutable_chunk_info_columns());
    *messages.add_chunk_info() = info;
  }
  ExpectRows(columns);
  ExpectRows(messages);
  for (const v1::ChunkMetrics* chunks : {&columns, &messages}) {
    const ChunkInfoRows rows(*chunks);
    ASSERT_EQ(rows.num_files(), 2u);
    EXPECT_EQ(rows.file_name(rows[0].file_index), "a.root");
    EXPECT_EQ(rows[2].file_index, rows[0].file_index);
    EXPECT_EQ(rows.file_name(rows[1].file_index), "b.root");
  }
}

TEST(ChunkInfoRowsTest, OldEntriesConvertToColumnsOfTheSameRows) {
  v1::ChunkMetrics messages;
  for (const v1::ChunkInfo& info : kEntries) *messages.add_chunk_info() = info;
  v1::ChunkMetrics columns;
  *columns.mutable_chunk_info_columns() = ChunkInfoColumnsOf(messages.chunk_info());
  ExpectRows(columns);
  EXPECT_EQ(columns.chunk_info_columns().files_size(), 2);
  EXPECT_EQ(columns.chunk_info_size(), 0);
}

TEST(ChunkInfoRowsTest, BothFormsAreReadMessagesFirstWithFilesShared) {
  v1::ChunkMetrics chunks;
  *chunks.add_chunk_info() = kEntries[0];
  AddRow(kEntries[1], chunks.mutable_chunk_info_columns());
  AddRow(kEntries[2], chunks.mutable_chunk_info_columns());
  ExpectRows(chunks);
  const ChunkInfoRows rows(chunks);
  EXPECT_EQ(rows.num_files(), 2u);
  EXPECT_EQ(rows[2].file_index, rows[0].file_index);
}

TEST(ChunkInfoRowsTest, ClearDropsBothForms) {
  v1::ChunkMetrics chunks;
  *chunks.add_chunk_info() = kEntries[0];
  AddRow(kEntries[1], chunks.mutable_chunk_info_columns());
  ClearChunkInfo(&chunks);
  EXPECT_EQ(ChunkInfoSize(chunks), 0u);
  EXPECT_TRUE(ChunkInfoRows(chunks).empty());
}

TEST(ChunkInfoRowsTest, SoundColumnsAreLeftAlone) {
  v1::ChunkMetrics chunks;
  for (const v1::ChunkInfo& info : kEntries) AddRow(info, chunks.mutable_chunk_info_columns());
  EXPECT_EQ(RepairChunkInfoColumns(chunks.mutable_chunk_info_columns()), std::nullopt);
  ExpectRows(chunks);
}

TEST(ChunkInfoRowsTest, ColumnsOfDifferentLengthsAreReadToTheShortestAndRepaired) {
  v1::ChunkMetrics chunks;
  for (const v1::ChunkInfo& info : kEntries) AddRow(info, chunks.mutable_chunk_info_columns());
  chunks.mutable_chunk_info_columns()->add_bytes_read(7);  // one value too many
  chunks.mutable_chunk_info_columns()->mutable_entry_stop()->RemoveLast();
  ASSERT_EQ(ChunkInfoSize(chunks), 2u);  // read safely before any repair
  EXPECT_EQ(ChunkInfoRows(chunks)[1].entry_stop, 20);
  const std::optional<std::string> problem =
      RepairChunkInfoColumns(chunks.mutable_chunk_info_columns());
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("entry_stop 2"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("kept the first 2 of 4 rows"), std::string::npos) << *problem;
  EXPECT_EQ(chunks.chunk_info_columns().bytes_read_size(), 2);
  EXPECT_EQ(RepairChunkInfoColumns(chunks.mutable_chunk_info_columns()), std::nullopt);
}

TEST(ChunkInfoRowsTest, AFileIndexPastTheFilesEndsTheRows) {
  v1::ChunkMetrics chunks;
  for (const v1::ChunkInfo& info : kEntries) AddRow(info, chunks.mutable_chunk_info_columns());
  chunks.mutable_chunk_info_columns()->set_file_index(1, 9);
  EXPECT_EQ(ChunkInfoSize(chunks), 1u);
  EXPECT_EQ(ChunkInfoRows(chunks).size(), 1u);
  const std::optional<std::string> problem =
      RepairChunkInfoColumns(chunks.mutable_chunk_info_columns());
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem, "chunk_info_columns: row 1 names file 9 of 2; kept the first 1 of 3 rows");
  EXPECT_EQ(chunks.chunk_info_columns().start_unix_ns_size(), 1);
}

}  // namespace
}  // namespace roastcoffea
