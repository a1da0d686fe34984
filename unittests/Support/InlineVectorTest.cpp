//===- InlineVectorTest.cpp - inline storage with heap fallback -----------===//

#include "autoshard/Support/InlineVector.h"
#include "autoshard/Support/AxesRef.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace autoshard;

namespace {
using Small = InlineVector<int64_t, 2>;

TEST(InlineVector, StaysInlineUpToCapacityThenGrows) {
  Small v;
  EXPECT_TRUE(v.empty());
  v.push_back(1);
  v.emplace_back(2);
  EXPECT_TRUE(v.isInline());
  EXPECT_EQ(v.capacity(), 2u);
  v.push_back(3);
  EXPECT_FALSE(v.isInline());
  EXPECT_EQ(v, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(v.front(), 1);
  EXPECT_EQ(v.back(), 3);
  v.pop_back();
  EXPECT_EQ(v.size(), 2u);
  v.clear();
  EXPECT_TRUE(v.empty());
}

TEST(InlineVector, PushBackOfOwnElementWhileGrowing) {
  Small v = {7, 8};
  v.push_back(v[0]);
  v.push_back(v[2]);
  EXPECT_EQ(v, (std::vector<int64_t>{7, 8, 7, 7}));
}

TEST(InlineVector, CopyAndMoveInlineAndHeap) {
  for (size_t n : {1, 2, 5}) {
    Small v;
    for (size_t i = 0; i < n; ++i)
      v.push_back(static_cast<int64_t>(i));
    Small copy = v;
    EXPECT_EQ(copy, v);
    Small moved = std::move(copy);
    EXPECT_EQ(moved, v);
    EXPECT_TRUE(copy.empty()); // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(copy.isInline());
    Small assigned = {9, 9, 9};
    assigned = v;
    EXPECT_EQ(assigned, v);
    Small moveAssigned = {9, 9, 9};
    moveAssigned = std::move(assigned);
    EXPECT_EQ(moveAssigned, v);
    Small &alias = moveAssigned;
    moveAssigned = alias; // self-assignment keeps the elements
    EXPECT_EQ(moveAssigned, v);
  }
}

TEST(InlineVector, HeapPointerSharesTheInlineBytes) {
  // The elements or the heap pointer, then size and capacity: no separate
  // pointer to the inline elements.
  EXPECT_EQ(sizeof(Small), 2 * sizeof(int64_t) + 2 * sizeof(uint32_t));
  EXPECT_EQ(sizeof(InlineVector<int8_t, 4>),
            sizeof(void *) + 2 * sizeof(uint32_t));
  // A vector whose heap buffer moved out is inline and empty, and grows
  // again; the one that took the buffer keeps it.
  Small v = {1, 2, 3};
  Small w = std::move(v);
  EXPECT_TRUE(v.isInline()); // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(w.isInline());
  for (int64_t x : {4, 5, 6, 7, 8})
    v.push_back(x);
  EXPECT_EQ(v, (std::vector<int64_t>{4, 5, 6, 7, 8}));
  EXPECT_EQ(w, (std::vector<int64_t>{1, 2, 3}));
  w = std::move(v);
  EXPECT_EQ(w, (std::vector<int64_t>{4, 5, 6, 7, 8}));
  v = {9};
  EXPECT_TRUE(v.isInline());
  EXPECT_EQ(v, (std::vector<int64_t>{9}));
}

TEST(InlineVector, ConstructAssignResize) {
  std::vector<int64_t> src = {4, 5, 6};
  Small fromRange(src.begin(), src.end());
  EXPECT_EQ(fromRange, src);
  Small filled(3, 2);
  EXPECT_EQ(filled, (std::vector<int64_t>{2, 2, 2}));
  Small sized(3);
  EXPECT_EQ(sized, (std::vector<int64_t>{0, 0, 0}));
  filled.assign(src.begin(), src.begin() + 1);
  EXPECT_EQ(filled, (std::vector<int64_t>{4}));
  filled.assign(2, 1);
  EXPECT_EQ(filled, (std::vector<int64_t>{1, 1}));
  filled.resize(4, -1);
  EXPECT_EQ(filled, (std::vector<int64_t>{1, 1, -1, -1}));
  filled.resize(1);
  EXPECT_EQ(filled, (std::vector<int64_t>{1}));
  filled = {3, 2, 1};
  EXPECT_EQ(filled.vec(), (std::vector<int64_t>{3, 2, 1}));
}

TEST(InlineVector, InsertAndErase) {
  Small v = {1, 4};
  std::vector<int64_t> mid = {2, 3};
  v.insert(v.begin() + 1, mid.begin(), mid.end());
  EXPECT_EQ(v, (std::vector<int64_t>{1, 2, 3, 4}));
  v.insert(v.end(), {5, 6});
  EXPECT_EQ(v, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  // A range from the vector itself, into its middle.
  v.insert(v.begin() + 1, v.begin() + 4, v.end());
  EXPECT_EQ(v, (std::vector<int64_t>{1, 5, 6, 2, 3, 4, 5, 6}));
  v.insert(v.begin(), v[7]);
  EXPECT_EQ(v, (std::vector<int64_t>{6, 1, 5, 6, 2, 3, 4, 5, 6}));
  v.erase(v.begin() + 2, v.begin() + 5);
  EXPECT_EQ(v, (std::vector<int64_t>{6, 1, 3, 4, 5, 6}));
  v.erase(v.begin());
  EXPECT_EQ(v, (std::vector<int64_t>{1, 3, 4, 5, 6}));
}

TEST(InlineVector, Ordering) {
  EXPECT_TRUE((Small{1, 2}) < (Small{1, 3}));
  EXPECT_TRUE((Small{1}) < (Small{1, 0}));
  EXPECT_FALSE((Small{2}) < (Small{1, 5}));
  EXPECT_TRUE((Small{1, 2}) != (Small{1, 2, 3}));
  EXPECT_TRUE((std::vector<int64_t>{1}) != (Small{2}));
}

TEST(InlineVector, NestedNonTrivialElements) {
  using Inner = InlineVector<std::string, 1>;
  InlineVector<Inner, 2> outer = {{"a"}, {}, {"b", "c"}};
  EXPECT_FALSE(outer.isInline());
  EXPECT_FALSE(outer[2].isInline());
  InlineVector<Inner, 2> copy = outer;
  outer[2].push_back("d");
  EXPECT_EQ(copy[2].size(), 2u);
  EXPECT_EQ(outer[2].back(), "d");
  outer.resize(1);
  EXPECT_EQ(outer.size(), 1u);
  outer.emplace_back().push_back("e");
  EXPECT_EQ(outer[1][0], "e");
  copy = std::move(outer);
  EXPECT_EQ(copy.size(), 2u);
  EXPECT_EQ(copy[0][0], "a");
}

TEST(InlineVector, DestroysEveryElement) {
  auto counter = std::make_shared<int>(0);
  {
    InlineVector<std::shared_ptr<int>, 2> v;
    for (int i = 0; i < 5; ++i)
      v.push_back(counter);
    EXPECT_EQ(counter.use_count(), 6);
    v.erase(v.begin());
    EXPECT_EQ(counter.use_count(), 5);
    InlineVector<std::shared_ptr<int>, 2> moved = std::move(v);
    EXPECT_EQ(counter.use_count(), 5);
  }
  EXPECT_EQ(counter.use_count(), 1);
}

int64_t sum(AxesRef axes) {
  int64_t s = 0;
  for (int64_t a : axes)
    s += a;
  return s;
}

TEST(AxesRef, ViewsVectorsInlineVectorsAndLists) {
  EXPECT_EQ(sum(std::vector<int64_t>{1, 2}), 3);
  EXPECT_EQ(sum(Small{1, 2, 3}), 6);
  EXPECT_EQ(sum({4}), 4);
  EXPECT_EQ(sum({}), 0);
}
} // namespace
