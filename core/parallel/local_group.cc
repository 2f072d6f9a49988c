#include "core/parallel/local_group.h"

#include <string.h>

#include <exception>
#include <string>
#include <thread>

#include "core/error.h"

namespace lockstep {
namespace parallel {

class LocalGroup::Member : public Communicator {
 public:
  Member(LocalGroup& group, int rank) : group_(group), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return group_.size_; }

  void AllToAll(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                const std::vector<size_t>& recv_bytes) override {
    Publish(send, send_bytes);
    uint8_t* out = static_cast<uint8_t*>(recv);
    for (int i = 0; i < group_.size_; ++i) {
      const std::vector<size_t>& theirs = group_.published_bytes_[static_cast<size_t>(i)];
      size_t offset = 0;
      for (int j = 0; j < rank_; ++j) offset += theirs[static_cast<size_t>(j)];
      const size_t bytes = recv_bytes[static_cast<size_t>(i)];
      LOCKSTEP_REQUIRE_KIND(ErrorKind::kInternal, theirs[static_cast<size_t>(rank_)] == bytes,
                            "all-to-all: rank " << i << " sends " << theirs[static_cast<size_t>(rank_)] << " bytes to rank "
                                                << rank_ << ", which expects " << bytes);
      if (bytes > 0) memcpy(out, group_.published_[static_cast<size_t>(i)] + offset, bytes);
      out += bytes;
    }
    group_.Barrier();
  }

  void AllGather(const void* mine, void* all, const std::vector<size_t>& bytes) override {
    Publish(mine, {bytes[static_cast<size_t>(rank_)]});
    uint8_t* out = static_cast<uint8_t*>(all);
    for (int i = 0; i < group_.size_; ++i) {
      const size_t n = bytes[static_cast<size_t>(i)];
      LOCKSTEP_REQUIRE_KIND(ErrorKind::kInternal, group_.published_bytes_[static_cast<size_t>(i)][0] == n,
                            "all-gather: rank " << i << " gives " << group_.published_bytes_[static_cast<size_t>(i)][0]
                                                << " bytes, rank " << rank_ << " expects " << n);
      if (n > 0) memcpy(out, group_.published_[static_cast<size_t>(i)], n);
      out += n;
    }
    group_.Barrier();
  }

  void Broadcast(void* data, size_t bytes, int root) override {
    Publish(data, {bytes});
    if (rank_ != root && bytes > 0) memcpy(data, group_.published_[static_cast<size_t>(root)], bytes);
    group_.Barrier();
  }

  void AllSum(int64_t* values, size_t count) override {
    Publish(values, {count});
    std::vector<int64_t> sums(count, 0);
    for (int i = 0; i < group_.size_; ++i) {
      const int64_t* theirs = reinterpret_cast<const int64_t*>(group_.published_[static_cast<size_t>(i)]);
      for (size_t k = 0; k < count; ++k) sums[k] += theirs[k];
    }
    group_.Barrier();
    for (size_t k = 0; k < count; ++k) values[k] = sums[k];
  }

 private:
  // Makes this rank's buffer visible, then waits for every rank's.
  void Publish(const void* data, const std::vector<size_t>& bytes) {
    {
      std::lock_guard<std::mutex> lock(group_.mutex_);
      group_.published_[static_cast<size_t>(rank_)] = static_cast<const uint8_t*>(data);
      group_.published_bytes_[static_cast<size_t>(rank_)] = bytes;
    }
    group_.Barrier();
  }

  LocalGroup& group_;
  int rank_;
};

LocalGroup::LocalGroup(int size) : size_(size), published_(static_cast<size_t>(size)), published_bytes_(static_cast<size_t>(size)) {
  LOCKSTEP_REQUIRE(size >= 1, "local group: expected at least one rank, got " << size);
  for (int r = 0; r < size; ++r) members_.push_back(std::make_unique<Member>(*this, r));
}

LocalGroup::~LocalGroup() = default;

Communicator& LocalGroup::rank(int r) {
  LOCKSTEP_REQUIRE(r >= 0 && r < size_, "local group: rank " << r << " of " << size_);
  return *members_[static_cast<size_t>(r)];
}

void LocalGroup::Barrier() {
  std::unique_lock<std::mutex> lock(mutex_);
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, !failed_, "local group: another rank failed");
  const uint64_t generation = generation_;
  if (++waiting_ == size_) {
    waiting_ = 0;
    ++generation_;
    arrived_.notify_all();
    return;
  }
  arrived_.wait(lock, [&] { return generation_ != generation || failed_; });
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, !failed_ || generation_ != generation, "local group: another rank failed");
}

void LocalGroup::Fail() {
  std::lock_guard<std::mutex> lock(mutex_);
  failed_ = true;
  arrived_.notify_all();
}

void LocalGroup::Run(int size, const std::function<void(int, Communicator&)>& body) {
  LocalGroup group(size);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r, group.rank(r));
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
        group.Fail();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // The first failure that is not the echo of another rank's.
  std::exception_ptr first;
  for (const std::exception_ptr& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const Error& err) {
      if (err.kind() == ErrorKind::kUnavailable && std::string(err.what()) == "local group: another rank failed") {
        if (!first) first = e;
        continue;
      }
      std::rethrow_exception(e);
    } catch (...) {
      std::rethrow_exception(e);
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace parallel
}  // namespace lockstep
