// rpc.cc — the gRPC side of convgpu-dra-driver (dra.h): kubelet's plugin registration service on
// <registry>/gpu.convgpu.io-reg.sock, and the DRA node service on <plugin>/dra.sock in both
// versions kubelet may pick (v1.DRAPlugin, Kubernetes 1.34 and later; v1beta1.DRAPlugin, 1.32 and
// 1.33), over Debian's grpc++ as the device plugin does (its rpc.cc says why C++). No decision is
// made here: each claim goes to dra_prepare/dra_unprepare in prepare.c, and a claim's failure is
// that claim's error string, as the API asks (the call itself succeeds).
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "dra.h"
#include "dra_v1.grpc.pb.h"
#include "dra_v1beta1.grpc.pb.h"
#include "pluginregistration.grpc.pb.h"

namespace {

namespace v1 = k8s::io::kubelet::pkg::apis::dra::v1;
namespace v1beta1 = k8s::io::kubelet::pkg::apis::dra::v1beta1;
namespace reg = pluginregistration;

constexpr mode_t kSocketMode = 0600; // kubelet (root) only
constexpr int kMaxMessageBytes = 4 << 20;
constexpr size_t kMemoryQuota = 64u << 20;
constexpr int kMaxThreads = 32;
constexpr size_t kMaxClaimsPerCall = 256; // a pod's claims; more is not kubelet

std::mutex reg_lock;
bool registered = false;
std::string reg_error;

std::string dra_socket() { return std::string(dra_config_get()->plugin_dir) + "/dra.sock"; }
std::string reg_socket()
{
    return std::string(dra_config_get()->registry_dir) + "/" DRA_DRIVER "-reg.sock";
}

class Registration final : public reg::Registration::Service {
    grpc::Status GetInfo(grpc::ServerContext *, const reg::InfoRequest *,
                         reg::PluginInfo *out) override
    {
        out->set_type("DRAPlugin");
        out->set_name(DRA_DRIVER);
        out->set_endpoint(dra_socket());
        out->add_supported_versions("v1.DRAPlugin");
        out->add_supported_versions("v1beta1.DRAPlugin");
        return grpc::Status::OK;
    }
    grpc::Status NotifyRegistrationStatus(grpc::ServerContext *, const reg::RegistrationStatus *st,
                                          reg::RegistrationStatusResponse *) override
    {
        std::lock_guard<std::mutex> g(reg_lock);
        registered = st->plugin_registered();
        reg_error = st->error();
        std::fprintf(stderr, "convgpu-dra-driver: kubelet %s%s%s\n",
                     registered ? "registered the driver" : "refused the driver",
                     reg_error.empty() ? "" : ": ", reg_error.c_str());
        return grpc::Status::OK;
    }
};

// The two versions carry the same messages: one template serves both.
template <class Api, class Base> class Node final : public Base {
    grpc::Status NodePrepareResources(grpc::ServerContext *,
                                      const typename Api::NodePrepareResourcesRequest *req,
                                      typename Api::NodePrepareResourcesResponse *out) override
    {
        if (static_cast<size_t>(req->claims_size()) > kMaxClaimsPerCall)
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "too many claims in one call");
        for (const auto &c : req->claims()) {
            dra_prepared prepared[DRA_MAX_RESULTS];
            size_t n = 0;
            char err[1024] = "";
            auto &answer = (*out->mutable_claims())[c.uid()];
            if (dra_prepare(c.namespace_().c_str(), c.name().c_str(), c.uid().c_str(), prepared,
                            DRA_MAX_RESULTS, &n, err, sizeof err) != 0) {
                answer.set_error(err);
                continue;
            }
            for (size_t i = 0; i < n; i++) {
                auto *d = answer.add_devices();
                d->add_request_names(prepared[i].request);
                d->set_pool_name(prepared[i].pool);
                d->set_device_name(prepared[i].device);
                d->add_cdi_device_ids(prepared[i].cdi_id);
            }
        }
        return grpc::Status::OK;
    }

    grpc::Status NodeUnprepareResources(grpc::ServerContext *,
                                        const typename Api::NodeUnprepareResourcesRequest *req,
                                        typename Api::NodeUnprepareResourcesResponse *out) override
    {
        if (static_cast<size_t>(req->claims_size()) > kMaxClaimsPerCall)
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "too many claims in one call");
        for (const auto &c : req->claims()) {
            char err[1024] = "";
            auto &answer = (*out->mutable_claims())[c.uid()];
            if (dra_unprepare(c.namespace_().c_str(), c.name().c_str(), c.uid().c_str(), err,
                              sizeof err) != 0)
                answer.set_error(err);
        }
        return grpc::Status::OK;
    }
};

struct V1 {
    using NodePrepareResourcesRequest = v1::NodePrepareResourcesRequest;
    using NodePrepareResourcesResponse = v1::NodePrepareResourcesResponse;
    using NodeUnprepareResourcesRequest = v1::NodeUnprepareResourcesRequest;
    using NodeUnprepareResourcesResponse = v1::NodeUnprepareResourcesResponse;
};
struct V1beta1 {
    using NodePrepareResourcesRequest = v1beta1::NodePrepareResourcesRequest;
    using NodePrepareResourcesResponse = v1beta1::NodePrepareResourcesResponse;
    using NodeUnprepareResourcesRequest = v1beta1::NodeUnprepareResourcesRequest;
    using NodeUnprepareResourcesResponse = v1beta1::NodeUnprepareResourcesResponse;
};

Registration registration;
Node<V1, v1::DRAPlugin::Service> node_v1;
Node<V1beta1, v1beta1::DRAPlugin::Service> node_v1beta1;
std::unique_ptr<grpc::Server> dra_server, reg_server;

std::unique_ptr<grpc::Server> serve(const std::string &path, std::vector<grpc::Service *> services,
                                    char *err, size_t errlen)
{
    unlink(path.c_str());
    grpc::ServerBuilder b;
    grpc::ResourceQuota quota("convgpu-dra-driver " + path);
    quota.Resize(kMemoryQuota).SetMaxThreads(kMaxThreads);
    b.SetResourceQuota(quota);
    b.SetMaxReceiveMessageSize(kMaxMessageBytes);
    b.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
    for (auto *s : services)
        b.RegisterService(s);
    mode_t old = umask(0777 & ~kSocketMode);
    auto server = b.BuildAndStart();
    umask(old);
    if (!server || chmod(path.c_str(), kSocketMode) != 0) {
        std::snprintf(err, errlen, "cannot serve on %s", path.c_str());
        return nullptr;
    }
    return server;
}

} // namespace

extern "C" int dra_rpc_serve(char *err, size_t errlen)
{
    // The node service first: kubelet dials it as soon as it has read GetInfo.
    dra_server = serve(dra_socket(), {&node_v1, &node_v1beta1}, err, errlen);
    if (!dra_server)
        return -1;
    reg_server = serve(reg_socket(), {&registration}, err, errlen);
    if (!reg_server) {
        dra_rpc_stop();
        return -1;
    }
    return 0;
}

extern "C" void dra_rpc_stop(void)
{
    for (auto *s : {&reg_server, &dra_server}) {
        if (!*s)
            continue;
        (*s)->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
        (*s)->Wait();
        s->reset();
    }
    unlink(reg_socket().c_str());
    unlink(dra_socket().c_str());
}

extern "C" bool dra_rpc_registered(char *err, size_t errlen)
{
    std::lock_guard<std::mutex> g(reg_lock);
    if (err && errlen)
        std::snprintf(err, errlen, "%s", reg_error.c_str());
    return registered;
}
