// rpc.cc — the gRPC side of convgpu-device-plugin: the DevicePlugin service on two sockets and
// the Register call on kubelet.sock, over Debian's grpc++ (plugin.h).
//
// Why C++: gRPC's C core has a server API only as a completion-queue state machine (every
// streaming write, cancellation and shutdown a hand-driven tag), and the protobuf messages have
// no C code generator in Debian; grpc++'s synchronous server and protoc's C++ output do both for
// us. This file holds no decision: each handler converts the message, calls the C function in
// handlers.c, and converts the answer back.
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "deviceplugin.grpc.pb.h"
#include "plugin.h"

namespace {

std::atomic<bool> stopping{false};

// Only kubelet (root) talks to the plugin: the socket is root's alone, whatever the umask.
constexpr mode_t kSocketMode = 0600;

// What one client may make an endpoint hold. kubelet keeps one ListAndWatch stream per
// endpoint and makes short unary calls; the largest message is GetPreferredAllocation's list of
// every free unit (64 GPUs x 320 units of 256 MiB on an 80 GiB GPU: ~400 KB of IDs), so these
// bounds leave honest traffic far inside them.
constexpr int kMaxMessageBytes = 4 << 20;   // grpc's default receive limit, made explicit
constexpr size_t kMemoryQuota = 64u << 20;  // buffers of all connections together
constexpr int kMaxThreads = 32;             // RPCs in progress (a stream holds one)
constexpr int kMaxStreamsPerConnection = 16;
constexpr int kHandshakeTimeoutMs = 10000;  // a connection that never finishes its preface
constexpr int kMaxMetadataBytes = 16 << 10; // headers of one call
constexpr int kKeepaliveMs = 60000;         // pings find a peer that vanished ...
constexpr int kKeepaliveTimeoutMs = 20000;  // ... and drop it when it does not answer

void bound(grpc::ServerBuilder &b, grpc::ResourceQuota &quota)
{
    b.SetResourceQuota(quota);
    b.SetMaxReceiveMessageSize(kMaxMessageBytes);
    b.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, kMaxStreamsPerConnection);
    b.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, kHandshakeTimeoutMs);
    b.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, kMaxMetadataBytes);
    b.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
    b.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
}

std::string socket_path(const char *name)
{
    return std::string(dp_config_get()->plugin_dir) + "/" + name;
}

grpc::Status answer(int code, const char *msg)
{
    return code == DP_OK ? grpc::Status::OK
                         : grpc::Status(static_cast<grpc::StatusCode>(code), msg);
}

std::vector<const char *> c_strings(const google::protobuf::RepeatedPtrField<std::string> &ids)
{
    std::vector<const char *> v;
    v.reserve(static_cast<size_t>(ids.size()));
    for (const auto &id : ids)
        v.push_back(id.c_str());
    return v;
}

class Endpoint final : public v1beta1::DevicePlugin::Service {
public:
    explicit Endpoint(cg_unit_kind kind) : kind_(kind) {}
    cg_unit_kind kind() const { return kind_; }

    grpc::Status GetDevicePluginOptions(grpc::ServerContext *, const v1beta1::Empty *,
                                        v1beta1::DevicePluginOptions *out) override
    {
        out->set_pre_start_required(false);
        out->set_get_preferred_allocation_available(true);
        return grpc::Status::OK;
    }

    // The whole list at once, then again after every change of the inventory, until kubelet
    // goes away or the plugin stops serving.
    grpc::Status ListAndWatch(grpc::ServerContext *ctx, const v1beta1::Empty *,
                              grpc::ServerWriter<v1beta1::ListAndWatchResponse> *writer) override
    {
        for (;;) {
            dp_inventory inv;
            uint64_t seen;
            dp_state_get(&inv, &seen);
            size_t n = 0;
            dp_device *units = dp_list_units(&inv, kind_, &n);
            if (!units)
                return grpc::Status(grpc::StatusCode::INTERNAL, "out of memory");
            v1beta1::ListAndWatchResponse list;
            for (size_t i = 0; i < n; i++) {
                v1beta1::Device *d = list.add_devices();
                d->set_id(units[i].id);
                d->set_health(units[i].healthy ? "Healthy" : "Unhealthy");
            }
            free(units);
            if (!writer->Write(list))
                return grpc::Status::OK; // kubelet closed the stream
            while (dp_wait_change(seen, 200) == seen)
                if (stopping || ctx->IsCancelled())
                    return grpc::Status::OK;
            if (stopping || ctx->IsCancelled())
                return grpc::Status::OK;
        }
    }

    grpc::Status GetPreferredAllocation(grpc::ServerContext *,
                                        const v1beta1::PreferredAllocationRequest *req,
                                        v1beta1::PreferredAllocationResponse *out) override
    {
        for (const auto &c : req->container_requests()) {
            std::vector<const char *> avail = c_strings(c.available_deviceids());
            std::vector<const char *> must = c_strings(c.must_include_deviceids());
            std::vector<size_t> chosen(static_cast<size_t>(std::max(c.allocation_size(), 0)));
            char msg[512] = "";
            int code = dp_prefer(kind_, avail.data(), avail.size(), must.data(), must.size(),
                                 c.allocation_size(), chosen.data(), msg, sizeof msg);
            if (code != DP_OK)
                return answer(code, msg);
            auto *r = out->add_container_responses();
            for (size_t i : chosen)
                r->add_deviceids(avail[i]);
        }
        return grpc::Status::OK;
    }

    // Every container's IDs are checked before any answer is given: one bad container fails
    // the whole call (kubelet then fails the pod), and nothing was changed anywhere.
    grpc::Status Allocate(grpc::ServerContext *, const v1beta1::AllocateRequest *req,
                          v1beta1::AllocateResponse *out) override
    {
        if (req->container_requests_size() == 0)
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no container requests");
        for (const auto &c : req->container_requests()) {
            std::vector<const char *> ids = c_strings(c.devices_ids());
            dp_env envs[DP_MAX_ENVS];
            size_t nenvs = 0;
            char msg[768] = "";
            int code = dp_allocate(kind_, ids.data(), ids.size(), envs, &nenvs, msg, sizeof msg);
            if (code != DP_OK) {
                out->Clear();
                return answer(code, msg);
            }
            auto *r = out->add_container_responses();
            for (size_t i = 0; i < nenvs; i++)
                (*r->mutable_envs())[envs[i].name] = envs[i].value;
        }
        return grpc::Status::OK;
    }

    grpc::Status PreStartContainer(grpc::ServerContext *, const v1beta1::PreStartContainerRequest *,
                                   v1beta1::PreStartContainerResponse *) override
    {
        return grpc::Status::OK; // not asked for (pre_start_required is false)
    }

private:
    cg_unit_kind kind_;
};

struct Served {
    const char *endpoint;
    Endpoint service;
    std::unique_ptr<grpc::Server> server;
};

Served served[3] = {{DP_ENDPOINT_MEMORY, Endpoint(CG_UNIT_MEMORY), nullptr},
                    {DP_ENDPOINT_COMPUTE, Endpoint(CG_UNIT_COMPUTE), nullptr},
                    {DP_ENDPOINT_GPU, Endpoint(CG_UNIT_SLOT), nullptr}};

} // namespace

extern "C" int dp_rpc_serve(char *err, size_t errlen)
{
    stopping = false;
    for (Served &s : served) {
        std::string path = socket_path(s.endpoint);
        unlink(path.c_str()); // a socket left by an earlier run, or kubelet's leftovers
        grpc::ServerBuilder b;
        grpc::ResourceQuota quota(std::string("convgpu-device-plugin ") + s.endpoint);
        quota.Resize(kMemoryQuota).SetMaxThreads(kMaxThreads);
        bound(b, quota);
        b.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
        b.RegisterService(&s.service);
        // gRPC binds inside BuildAndStart, with the umask's mode: the mask makes the socket
        // born 0600 (no other thread creates files), the chmod says so whatever gRPC did.
        mode_t old_mask = umask(0777 & ~kSocketMode);
        s.server = b.BuildAndStart();
        umask(old_mask);
        if (s.server && chmod(path.c_str(), kSocketMode) != 0) {
            std::snprintf(err, errlen, "cannot set the mode of %s", path.c_str());
            dp_rpc_stop();
            return -1;
        }
        if (!s.server) {
            std::snprintf(err, errlen, "cannot serve on %s", path.c_str());
            dp_rpc_stop();
            return -1;
        }
    }
    return 0;
}

extern "C" void dp_rpc_stop(void)
{
    stopping = true;
    dp_wake_all();
    for (Served &s : served) {
        if (!s.server)
            continue;
        s.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
        s.server->Wait();
        s.server.reset();
        unlink(socket_path(s.endpoint).c_str());
    }
}

extern "C" int dp_rpc_register(char *err, size_t errlen)
{
    auto channel = grpc::CreateChannel("unix:" + socket_path(DP_KUBELET_SOCKET),
                                       grpc::InsecureChannelCredentials());
    auto stub = v1beta1::Registration::NewStub(channel);
    for (const Served &s : served) {
        cg_unit_kind kind = s.service.kind();
        v1beta1::RegisterRequest req;
        req.set_version(DP_API_VERSION);
        req.set_endpoint(s.endpoint);
        req.set_resource_name(dp_resource_name(kind));
        req.mutable_options()->set_get_preferred_allocation_available(true);
        v1beta1::Empty none;
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        // kubelet.sock appears at bind(), a moment before kubelet listens on it.
        ctx.set_wait_for_ready(true);
        grpc::Status st = stub->Register(&ctx, req, &none);
        if (!st.ok()) {
            std::snprintf(err, errlen, "kubelet refused to register %s: %s",
                          dp_resource_name(kind), st.error_message().c_str());
            return -1;
        }
    }
    return 0;
}
