SESSION = {"AccessKeyId": "${asia}"}
