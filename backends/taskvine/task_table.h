// TaskTable: the tasks of a run by id. TaskVine and Work Queue number tasks 1, 2, 3, ... so
// ids are kept in blocks of 4096 slots indexed by id (tasks alive at the same time sit next to
// each other in memory, no hashing, nothing moves when the table grows); ids far beyond the dense
// range go to a hash map.
//
// Thread-safety: none (one owner). Cost: O(1) find and insert (amortised); iteration visits
// dense ids in increasing order, then the sparse ones. Pointers are invalidated by inserts
// into the sparse map (dense slots never move) and by ReleaseDenseBelow.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_TASK_TABLE_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_TASK_TABLE_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace roastcoffea {
namespace taskvine {

template <typename T>
class TaskTable {
 public:
  // Ids below this stay dense when they are not much beyond the largest seen.
  static constexpr int64_t kMaxDenseId = int64_t{1} << 28;

  TaskTable() = default;
  TaskTable(TaskTable&&) = default;
  TaskTable& operator=(TaskTable&&) = default;
  TaskTable(const TaskTable& other)
      : present_(other.present_), sparse_(other.sparse_), size_(other.size_) {
    for (const std::unique_ptr<T[]>& block : other.blocks_) {
      if (block == nullptr) {  // released (ReleaseDenseBelow)
        blocks_.emplace_back();
        continue;
      }
      blocks_.push_back(std::make_unique<T[]>(kBlock));
      std::copy(block.get(), block.get() + kBlock, blocks_.back().get());
    }
  }
  TaskTable& operator=(const TaskTable& other) {
    if (this != &other) *this = TaskTable(other);
    return *this;
  }

  const T* find(int64_t id) const {
    if (id >= 0 && id < capacity()) return present_[id] ? &Slot(id) : nullptr;
    if (sparse_.empty()) return nullptr;  // no hashing for an empty table (e.g. no libraries)
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  T* find(int64_t id) { return const_cast<T*>(static_cast<const TaskTable*>(this)->find(id)); }
  bool contains(int64_t id) const { return find(id) != nullptr; }
  size_t count(int64_t id) const { return contains(id) ? 1 : 0; }
  const T& at(int64_t id) const {
    const T* t = find(id);
    if (t == nullptr) throw std::out_of_range("no task with this id");
    return *t;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The task with this id, default-constructed if new (second = true).
  std::pair<T*, bool> try_emplace(int64_t id) {
    if (T* existing = find(id)) return {existing, false};
    ++size_;
    if (id >= 0 && id < kMaxDenseId && id < 2 * capacity() + kBlock) {
      while (id >= capacity()) {
        blocks_.push_back(std::make_unique<T[]>(kBlock));
        present_.resize(present_.size() + kBlock, false);
      }
      std::unique_ptr<T[]>& block = blocks_[id / kBlock];
      if (block == nullptr) {  // ReleaseDenseBelow freed it
        block = std::make_unique<T[]>(kBlock);
        released_blocks_ = std::min(released_blocks_, id / kBlock);
      }
      present_[id] = true;  // erase() left the slot default-constructed
      return {&Slot(id), true};
    }
    return {&sparse_[id], true};
  }

  void erase(int64_t id) {
    if (id >= 0 && id < capacity()) {
      if (present_[id]) {
        present_[id] = false;
        T& slot = Slot(id);
        slot.~T();  // back to a default-constructed slot
        ::new (&slot) T();
        --size_;
      }
      return;
    }
    size_ -= sparse_.erase(id);
  }

  // Frees every dense block whose ids all lie below `id`, with the tasks in it (as erase()
  // would, but the memory goes back): for a reader that has consumed the tasks in id order.
  // Cost: O(kBlock) per block freed.
  void ReleaseDenseBelow(int64_t id) {
    const int64_t blocks = std::min<int64_t>(id, capacity()) / kBlock;
    for (int64_t b = released_blocks_; b < blocks; ++b) {
      if (blocks_[b] == nullptr) continue;
      for (int64_t i = b * kBlock; i < (b + 1) * kBlock; ++i) {
        if (present_[i]) --size_;
        present_[i] = false;
      }
      blocks_[b].reset();
    }
    released_blocks_ = std::max(released_blocks_, blocks);
  }

  class const_iterator {
   public:
    std::pair<int64_t, const T&> operator*() const {
      if (index_ < table_->capacity()) return {index_, table_->Slot(index_)};
      return {sparse_->first, sparse_->second};
    }
    const_iterator& operator++() {
      if (index_ < table_->capacity()) {
        ++index_;
        SkipAbsent();
      } else {
        ++sparse_;
      }
      return *this;
    }
    bool operator!=(const const_iterator& other) const {
      return index_ != other.index_ || sparse_ != other.sparse_;
    }

   private:
    friend class TaskTable;
    const_iterator(const TaskTable* table, int64_t index,
                   typename absl::flat_hash_map<int64_t, T>::const_iterator sparse)
        : table_(table), index_(index), sparse_(sparse) {
      SkipAbsent();
    }
    void SkipAbsent() {
      while (index_ < table_->capacity() && !table_->present_[index_]) ++index_;
    }
    const TaskTable* table_;
    int64_t index_;
    typename absl::flat_hash_map<int64_t, T>::const_iterator sparse_;
  };
  const_iterator begin() const { return const_iterator(this, 0, sparse_.begin()); }
  const_iterator end() const { return const_iterator(this, capacity(), sparse_.end()); }

 private:
  static constexpr int64_t kBlock = 4096;
  int64_t capacity() const { return static_cast<int64_t>(blocks_.size()) * kBlock; }
  T& Slot(int64_t id) const { return blocks_[id / kBlock][id % kBlock]; }

  std::vector<std::unique_ptr<T[]>> blocks_;
  std::vector<bool> present_;
  absl::flat_hash_map<int64_t, T> sparse_;
  size_t size_ = 0;
  int64_t released_blocks_ = 0;  // ReleaseDenseBelow freed the blocks before this one
};

}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_TASK_TABLE_H_
