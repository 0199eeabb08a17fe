#include "export/test_profile.h"

namespace roastcoffea {
namespace testing_export {

v1::Profile ProfileTree(const std::vector<ProfileNodeSpec>& nodes, const std::string& source,
                        const std::string& worker, int64_t root_count, double interval_seconds) {
  v1::Profile profile;
  profile.set_source(source);
  profile.set_worker(worker);
  profile.set_sampling_interval_seconds(interval_seconds);
  v1::ProfileNode* root = profile.add_nodes();
  root->set_parent(-1);
  root->set_frame(-1);
  root->set_count(root_count);
  for (const ProfileNodeSpec& spec : nodes) {
    v1::ProfileFrame* frame = profile.add_frames();
    frame->set_function(spec.function);
    v1::ProfileNode* node = profile.add_nodes();
    node->set_parent(spec.parent);
    node->set_frame(profile.frames_size() - 1);
    node->set_count(spec.count);
  }
  return profile;
}

}  // namespace testing_export
}  // namespace roastcoffea
