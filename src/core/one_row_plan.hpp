#pragma once
// The lifting matrix laid out for hashing ONE row at a time (issue 21): the block kernels
// (flyhash_kernels.hpp) vectorise across a block of rows, so a lone row costs a whole
// block; this layout lets a kernel vectorise across units instead.
//
// The row is held as bytes (integer rows with values in 0..255, or in −127..127) in 32-byte
// blocks of 31 columns each, the 32nd byte of every block being 0: column c sits at byte
// 32·⌊c/31⌋ + c mod 31. A *window* is four consecutive blocks (128 bytes), which one AVX-512
// VBMI byte permute (vpermi2b) indexes with 7 bits, from two 64-byte loads. Windows start
// at any block; so that those loads stay aligned, the row buffer holds the row twice: at
// byte 0, and shifted by one block at byte shifted_offset() (a window at an odd block reads
// the shifted copy). Each step stores its window's byte offset in that buffer.
//
// Units are processed in *batches* of kGroups × kLanes units. A batch is a sequence of
// *steps*; a step names one window (shared by the batch) and gives every unit of the batch
// kSlots bytes: each the position (bits 0–6) of one of the unit's columns in that window, or
// of a block's zero byte (a pad), and with signed lifting the column's sign (bit 7: −1).
// Every column of every unit appears in exactly one slot, so a unit's activation is the sum
// over its slots, which a kernel adds in 32-bit integers: exact in any order, hence the
// same winners as every other kernel (the integer paths compare exact sums).
//
// Building (once per hasher, on the first small call): units are ordered so that a batch
// holds units whose ascending column lists are alike (recursive median splits on the
// column at the middle slot, then at the quarter slots, …), then each batch is scheduled
// greedily: the window starts at the block of the smallest column still pending, and every
// unit takes up to kSlots of its next pending columns inside it. For random columns this
// takes about 1.07 slots per column at the Fashion-MNIST paper shape (1.11 at s = 64), i.e.
// that many bytes per entry of the matrix, against 2 for the block kernels' 16-bit indices.
// (Windows at 64-byte blocks took 1.10 and 1.16.) Finally the batches are ordered by their
// number of steps, so that a kernel's loop over a batch's steps ends predictably.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "flynn/lifting_matrix.hpp"

namespace flynn::kernels {

/// madvise(MADV_HUGEPAGE) where the system has it; nothing elsewhere (a hint only).
void advise_huge_pages(void* p, std::size_t bytes);

/// Allocates on 64-byte boundaries: a kernel's 64-byte loads of slot bytes then never
/// straddle two cache lines (which cost about a sixth of the one-row kernel's time).
/// Allocations of 2 MiB or more are 2 MiB-aligned whole huge pages, offered to the kernel
/// as transparent huge pages (madvise): the one-row kernel streams ~10 MB of them per row,
/// which in 4 KiB pages is ~2500 TLB misses a row.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return static_cast<T*>(::operator new (bytes, std::align_val_t{64}));
    void* p = ::operator new (huge_bytes(bytes), std::align_val_t{kHugePage});
    advise_huge_pages(p, huge_bytes(bytes));
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return ::operator delete (p, std::align_val_t{64});
    ::operator delete (p, std::align_val_t{kHugePage});
  }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static std::size_t huge_bytes(std::size_t bytes) {
    return (bytes + kHugePage - 1) / kHugePage * kHugePage;
  }
};

struct OneRowPlan {
  static constexpr std::uint32_t kLanes = 16;  ///< units of a group: one 32-bit lane each
  static constexpr std::uint32_t kGroups = 2;  ///< groups of a batch, sharing its windows
  static constexpr std::uint32_t kSlots = 4;   ///< bytes per unit and step (summed by vpdpbusd)
  static constexpr std::uint32_t kBatchUnits = kGroups * kLanes;
  static constexpr std::uint32_t kStepBytes = kBatchUnits * kSlots;
  static constexpr std::uint32_t kBlockBytes = 32;       ///< a block of the row buffer
  static constexpr std::uint32_t kBlockColumns = 31;     ///< columns per block (then a 0)
  static constexpr std::uint32_t kWindowBlocks = 4;      ///< 128 bytes
  static constexpr std::uint8_t kPad = 31;               ///< a slot reading its window's first 0
  static constexpr std::uint8_t kNegative = 0x80;        ///< slot bit: the column counts −1
  static constexpr std::uint32_t kNoUnit = 0xFFFFFFFFu;  ///< a lane past the last unit
  /// Widest byte row: both copies of it stay in L1 (2 × 16 KiB) beside the streamed slots
  /// (and a column with its sign fits 16 bits while the layout is built).
  static constexpr std::uint32_t kMaxColumns = 500 * kBlockColumns;

  std::uint32_t m = 0;        ///< units
  std::uint32_t columns = 0;  ///< columns of the byte row (w for signed lifting, not 2w)
  std::uint32_t blocks = 0;   ///< blocks of one copy of the row, zero blocks included
  bool signed_lifting = false;
  std::vector<std::uint32_t> batch_steps;  ///< per batch its first step; one more at the end
  std::vector<std::uint16_t> windows;      ///< per step its window's byte offset in the buffer
  /// per step kStepBytes: [group][lane][slot], 64-byte aligned
  std::vector<std::uint8_t, CacheLineAllocator<std::uint8_t>> slots;
  std::vector<std::uint32_t> units;  ///< per batch kBatchUnits unit indices (or kNoUnit)

  /// Bytes held (the estimate in model_footprint.cpp bounds this).
  std::size_t bytes() const;
  /// Byte offset of the shifted copy of the row in a row buffer (a multiple of 64).
  std::size_t shifted_offset() const { return (std::size_t(blocks) * kBlockBytes + 63) / 64 * 64; }
  /// Bytes of a row buffer: both copies.
  std::size_t row_bytes() const { return 2 * shifted_offset(); }
  /// Byte of column c in the (unshifted) copy.
  static std::size_t position(std::uint32_t c) {
    return std::size_t(c / kBlockColumns) * kBlockBytes + c % kBlockColumns;
  }
  /// Writes the shifted copy of the row held at buf[0, shifted_offset()) (whose block-end
  /// bytes are zero): buf[shifted_offset() + i] = buf[kBlockBytes + i].
  void shift_row(std::uint8_t* buf) const;
};

/// Builds the plan of `M`. With `signed_lifting`, M's columns are those of the mirrored row
/// [e, −e] (2w of them) and fold to w byte columns with a sign. Returns null when the row is
/// wider than kMaxColumns or a batch would exceed plan_steps_bound (random matrices never
/// come near it): the caller then keeps the block kernels.
std::unique_ptr<OneRowPlan> build_one_row_plan(const LiftingMatrix& M, bool signed_lifting);

/// Steps a batch may take, for s columns per unit among w byte columns: 2·⌈s/kSlots⌉ +
/// ⌈w/kBlockColumns⌉ + 2. Dense rows (s ≫ w/31) need about s/kSlots steps, sparse ones
/// (a unit's few columns spread over the row) about one per window of the row; this allows
/// twice the first plus the second. A matrix that needs more gets no plan.
std::uint64_t plan_steps_bound(std::uint64_t s, std::uint64_t w);
/// The most bytes a plan of m units × s columns among w byte columns holds (saturating;
/// for model_footprint).
std::uint64_t plan_bytes_bound(std::uint64_t m, std::uint64_t s, std::uint64_t w);

/// The plan of one FlyHasher, built once, on the first call that wants it.
struct OneRowPlanCache {
  std::once_flag once;
  std::unique_ptr<OneRowPlan> plan;
  std::atomic<bool> built{false};
  /// The plan (null when the matrix has none), built now if it was not yet.
  const OneRowPlan* get(const LiftingMatrix& M, bool signed_lifting) {
    std::call_once(once, [&] {
      plan = build_one_row_plan(M, signed_lifting);
      built.store(true, std::memory_order_release);
    });
    return plan.get();
  }
  /// The plan if get() has built it, else null; never builds.
  const OneRowPlan* built_plan() const {
    return built.load(std::memory_order_acquire) ? plan.get() : nullptr;
  }
};

}  // namespace flynn::kernels
