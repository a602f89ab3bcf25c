/* fu_callback.c: the simulated CUPTI's callback API and its small
 * queries. The callback API only models the single subscriber slot (a
 * second cuptiSubscribe fails, as in real CUPTI); no callbacks are made. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#define FU_API __attribute__((visibility("default")))

static pthread_mutex_t fu_lock = PTHREAD_MUTEX_INITIALIZER;
static int fu_subscribed;

static int fu_env(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

FU_API CUptiResult cuptiGetVersion(uint32_t *v)
{
    if (!v)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *v = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    if (!s)
        return CUPTI_ERROR_INVALID_PARAMETER;
    switch (r) {
    case CUPTI_SUCCESS: *s = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INVALID_PARAMETER: *s = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case CUPTI_ERROR_INVALID_KIND: *s = "CUPTI_ERROR_INVALID_KIND"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *s = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_MAX_LIMIT_REACHED: *s = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *s = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    default: *s = "CUPTI_ERROR_UNKNOWN"; break;
    }
    return CUPTI_SUCCESS;
}

/* The callback API: one subscriber at a time, as in real CUPTI; no
 * callbacks are delivered (nothing here uses them). */
FU_API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *data)
{
    (void)cb;
    (void)data;
    if (!sub)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fu_lock);
    int taken = fu_subscribed || fu_env("FAKECUDA_CUPTI_SUBSCRIBED");
    if (!taken)
        fu_subscribed = 1;
    pthread_mutex_unlock(&fu_lock);
    if (taken)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    *sub = (CUpti_SubscriberHandle)&fu_subscribed;
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
    if (sub != (CUpti_SubscriberHandle)&fu_subscribed)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fu_lock);
    fu_subscribed = 0;
    pthread_mutex_unlock(&fu_lock);
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub, CUpti_CallbackDomain d,
                                       CUpti_CallbackId id)
{
    (void)enable; (void)d; (void)id;
    return sub == (CUpti_SubscriberHandle)&fu_subscribed ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

FU_API CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle sub, CUpti_CallbackDomain d)
{
    (void)enable; (void)d;
    return sub == (CUpti_SubscriberHandle)&fu_subscribed ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}
