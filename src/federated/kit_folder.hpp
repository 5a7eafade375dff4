#pragma once
// Writing a folder of secrets whole (internal; provisioning): each file with its own mode
// (keys 0600), the folder 0700, written beside its place and renamed into it without ever
// replacing what is there (renameat2 RENAME_NOREPLACE).
#include <string>
#include <sys/types.h>
#include <vector>

namespace flynn::federated {

/// A file of a kit: its plain name, bytes and mode.
struct KitFile {
  std::string name;
  std::string bytes;
  mode_t mode = 0644;
};

/// A folder written beside `path`, put in place by commit(); removed when destroyed
/// uncommitted, or when rolled back.
class StagedFolder {
 public:
  /// Writes `files` (flushed to disk) into a new folder beside `path`. Throws flynn::Error
  /// naming `path` and the cause.
  StagedFolder(std::string path, const std::vector<KitFile>& files);
  ~StagedFolder();
  StagedFolder(StagedFolder&& other) noexcept;
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;
  StagedFolder& operator=(StagedFolder&&) = delete;
  /// Renames the folder to `path`; throws flynn::Error when anything is there already.
  void commit();
  /// Removes the committed folder again (a later kit of the same provision failed).
  void roll_back();

 private:
  std::string path_, staged_;
  bool committed_ = false;
};

/// Replaces the file `path` by `bytes` atomically, keeping mode `mode`.
void replace_file(const std::string& path, const std::string& bytes, mode_t mode);

}  // namespace flynn::federated
